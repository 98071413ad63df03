"""Errors as values: a diagnostic names a file, a line when known, and a reason."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Diagnostic:
    file: str
    line: int | None
    col: int | None
    message: str
    severity: str = "error"  # "error" fails the run; "warning" is reported only

    def __str__(self) -> str:
        where = self.file
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
