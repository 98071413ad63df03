"""`python -m adopter`: the `adopter` command."""

from adopter.cli.app import main

main()
