"""`memopt lm-check`: ask an LM one question and report latency (placeholder, being built)."""
