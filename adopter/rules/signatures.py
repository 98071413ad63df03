"""The parameters a call may pass by position or by keyword, for the torch names of the
catalogue (`catalogue/inputs/*.tsv`, generated with the catalogue by evaluation/torch_catalogue.py):
`F.softmax(input=x)` passes the pattern's input 0."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

INPUTS_DIR = Path(__file__).resolve().parent / "catalogue" / "inputs"


@lru_cache(maxsize=1)
def input_keywords() -> dict[str, tuple[tuple[str, int], ...]]:
    """Qualified name -> its (parameter, position) pairs, in position order."""
    found: dict[str, list[tuple[str, int]]] = {}
    for path in sorted(INPUTS_DIR.glob("*.tsv")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if line and not line.startswith("#") and line != "name\tparameter\tposition":
                name, parameter, position = line.split("\t")
                found.setdefault(name, []).append((parameter, int(position)))
    return {name: tuple(sorted(pairs, key=lambda pair: pair[1])) for name, pairs in found.items()}
