"""Benchmarks behind `memopt bench ...`: each returns plain rows that the CLI prints as a table."""
