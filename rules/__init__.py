"""The rule DSL: parser (`dsl.py`), compiler to Datalog (`compiler.py`), the bundled
rules (`paper/<id>.adopt`, each with its annotated fixture `<id>.py`) and the registry
that finds them (`registry.py`). Rules are data: parsing never evaluates Python."""
