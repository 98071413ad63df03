"""The `adopter` command: a thin typer app over adopter.api (app.py)."""
