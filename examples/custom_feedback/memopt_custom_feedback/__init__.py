"""memopt-custom-feedback: the ``error_counts`` feedback kind, found by memopt through its entry point."""
