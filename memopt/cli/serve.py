"""`memopt serve`: SimLM behind an OpenAI-compatible HTTP server (placeholder, being built)."""
