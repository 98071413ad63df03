"""The rule DSL: parser (`dsl.py`), type checker (`typecheck.py`, which reads the catalogue of
known names `catalogue/*.tsv`), compiler to Datalog (`compiler.py`), the bundled rules
(`<pack>/<id>.adopt`, each with its annotated fixture `<id>.py`) and the registry that finds
them (`registry.py`). Rules are data: parsing never evaluates Python."""
