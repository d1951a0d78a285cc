"""`python -m memopt` runs the command line."""

from memopt.cli import main

main()
