"""memopt-custom-attribution: the ``earliest_llm`` attribution method, found by memopt through its entry point."""
