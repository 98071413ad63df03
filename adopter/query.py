"""Datalog queries over facts and every derived relation, answered as a DataFrame."""

from __future__ import annotations

import re

from typing import TYPE_CHECKING

import clingo

from adopter.diagnostics import AdopterError, Diagnostic
from datalog.engine import solve, symbol_value
from extractor.python_facts import FileFacts

if TYPE_CHECKING:
    import pandas as pd

_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')
_VARIABLE = re.compile(r"\b[A-Z][A-Za-z0-9_']*\b")
_RESULT = "adopter_query_result"


def query_variables(text: str) -> list[str]:
    """The named variables of a query body, in order of first appearance."""
    seen: list[str] = []
    for name in _VARIABLE.findall(_STRING.sub('""', text)):
        if name not in seen:
            seen.append(name)
    return seen


def check_query(text: str) -> list[str]:
    """Validate the query's syntax without facts; return its variables."""
    variables = query_variables(text)
    messages: list[str] = []
    control = clingo.Control(["--warn=none"], logger=lambda _code, msg: messages.append(msg))
    try:
        control.add("base", [], f"{_RESULT}({', '.join(variables)}) :- {text.rstrip('. ')}.")
    except RuntimeError:
        reason = messages[0].split("error:", 1)[-1].strip() if messages else "cannot parse"
        raise AdopterError(Diagnostic("<query>", None, None, f"invalid query {text!r}: {reason}")) from None
    return variables


def run_query(all_facts: list[FileFacts], text: str) -> "pd.DataFrame":
    """Answer `text` (a rule body such as `qname(E, "torch.nn.Linear")`) for every file.

    Returns one row per answer: a `file` column, then one column per named variable.
    """
    import pandas as pd  # lazily: the CLI's other commands do not need it

    variables = check_query(text)
    head = f"{_RESULT}({', '.join(variables)})" if variables else _RESULT
    rule = f"{head} :- {text.rstrip('. ')}."
    rows = []
    for facts in all_facts:
        model = solve(facts, extra_program=rule, keep={_RESULT})
        for args in model.get(_RESULT):
            rows.append((facts.path,) + tuple(symbol_value(a) for a in args))
    return pd.DataFrame(rows, columns=["file"] + variables).sort_values(["file"] + variables, kind="stable",
                                                                       ignore_index=True)

