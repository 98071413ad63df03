"""`adopter structures`: the model structures of one method of one file, one per feasible path."""

from __future__ import annotations

from pathlib import Path

from adopter.extract.sources import facts_of_file
from adopter.matches.structures import DEFAULT_MAX_GUARDS, SUMMARY_MAX_GUARDS, Structure, model_structures
from adopter.records import AdopterError

__all__ = ["DEFAULT_MAX_GUARDS", "SUMMARY_MAX_GUARDS", "Structure", "UnreadableFile", "structures"]


class UnreadableFile(AdopterError):
    """The file cannot be read, decoded or parsed (bad input, not a bad argument)."""


def structures(file: Path, class_name: str, function: str = "forward",
               max_guards: int = DEFAULT_MAX_GUARDS) -> list[Structure]:
    """Every feasible structure of `class_name.function`. Raises UnreadableFile when the file
    cannot be read or parsed, AdopterError when the class or method is not there."""
    facts, problem = facts_of_file(file)
    if facts is None:
        raise UnreadableFile(problem)
    return model_structures(facts, class_name, function, max_guards)
