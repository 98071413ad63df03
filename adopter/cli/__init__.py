"""The `adopter` command: a thin typer app over adopter.api (app.py), started by launch.py."""
