"""`adopter structures`: the model structures of one method of one file, one per feasible path."""

from __future__ import annotations

from pathlib import Path

from adopter.datalog.engine import retain_controls
from adopter.extract.sources import facts_of_file
from adopter.matches.structures import DEFAULT_MAX_GUARDS, SUMMARY_MAX_GUARDS, Structure, model_structures
from adopter.records import AdopterError, Diagnostic
from adopter.support.forks import Limits, failure_reason, map_forked

__all__ = ["DEFAULT_MAX_GUARDS", "SUMMARY_MAX_GUARDS", "Structure", "UnreadableFile", "structures"]


class UnreadableFile(AdopterError):
    """The file cannot be read, decoded or parsed, or its analysis was stopped (bad input, not a bad argument)."""


def structures(file: Path, class_name: str, function: str = "forward", max_guards: int = DEFAULT_MAX_GUARDS,
               limits: Limits = Limits()) -> list[Structure]:
    """Every feasible structure of `class_name.function`, computed in a worker process within
    `limits` (time, memory). Raises UnreadableFile when the file cannot be read or parsed or
    a limit stops its analysis, AdopterError when the class or method is not there."""
    [(_, ok, value)] = list(map_forked(_structures, [(file, class_name, function, max_guards)], 1, limits))
    if not ok:
        raise UnreadableFile(Diagnostic(str(file), None, None, failure_reason(value, "analysis")))
    kind, found = value
    if kind == "unreadable":
        raise UnreadableFile(found)
    if kind == "error":
        raise AdopterError(found)
    return found


def _structures(task: tuple) -> tuple[str, list[Structure] | Diagnostic]:
    """In a worker: ("ok", structures), or ("unreadable" or "error", the diagnostic)."""
    file, class_name, function, max_guards = task
    retain_controls()  # this process ends with its file
    facts, problem = facts_of_file(file)
    if facts is None:
        return "unreadable", problem
    try:
        return "ok", model_structures(facts, class_name, function, max_guards)
    except AdopterError as error:
        return "error", error.diagnostic
