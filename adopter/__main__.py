"""`python -m adopter`: the `adopter` command (see adopter/launch.py)."""

from adopter.launch import main

main()
