"""Errors as values: a diagnostic names a file, a line when known, and a reason."""

from __future__ import annotations

import json
import unicodedata
from dataclasses import dataclass


def display_path(path: str) -> str:
    """A path for one-line output: as it is, or quoted with escapes (JSON string syntax)
    when it holds a control character, a quote, or a separator such as U+2028 that could
    end the line or forge another."""
    if any(c == '"' or unicodedata.category(c) in ("Cc", "Zl", "Zp") for c in path):
        return json.dumps(path, ensure_ascii=False)
    return path


@dataclass(frozen=True)
class Diagnostic:
    file: str
    line: int | None
    col: int | None
    message: str
    severity: str = "error"  # "error" fails the run; "warning" is reported only

    def __str__(self) -> str:
        where = display_path(self.file)
        if self.line is not None:
            where += f":{self.line}"
            if self.col is not None:
                where += f":{self.col}"
        return f"{where}: {self.severity}: {self.message}"


class AdopterError(Exception):
    """An error the user can act on; carries its diagnostic."""

    def __init__(self, diagnostic: Diagnostic):
        super().__init__(str(diagnostic))
        self.diagnostic = diagnostic
