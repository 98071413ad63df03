"""`python -m adopter`: the `adopter` command (see adopter/cli/launch.py)."""

from adopter.cli.launch import main

main()
