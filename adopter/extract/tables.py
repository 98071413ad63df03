"""Fact tables on disk: one TSV per relation, a header row, a leading `file` column.

Tables are written atomically (a reader never sees half a table) and read back with
pandas into one `FileFacts` per source file.
"""

from __future__ import annotations

import csv
import os
import tempfile
from pathlib import Path

from adopter.support.atomic import TEMP_SUFFIX, new_file_mode, remove_stale
from adopter.records import AdopterError, Diagnostic
from adopter.extract.python_facts import FileFacts
from adopter.extract.schema import INT_COLUMNS, RELATIONS, flat_fields


def _needs_quotes(text: str) -> bool:
    """Whether a TSV field must be quoted: as `csv` decides, and `\r` too, so no reader
    takes it for a line end."""
    return '"' in text or "\t" in text or "\n" in text or "\r" in text


def _field(text: str) -> str:
    """One TSV field as `csv` writes it (quoted only where needed)."""
    return '"' + text.replace('"', '""') + '"' if _needs_quotes(text) else text


def _field_column(texts: list[str]) -> list[str]:
    """`_field` of each text; a column often needs no quoting at all, which one scan tells."""
    return [_field(text) for text in texts] if _needs_quotes("".join(texts)) else texts


# Where a row starts in `table_rows` text, for `with_file_column` to put the file's path.
# Neither source text (Python rejects NUL in source) nor a path can hold a NUL.
ROW_START = "\0"


def table_rows(facts: FileFacts) -> dict[str, str]:
    """Each relation's rows of one file as TSV lines without the `file` column, each line
    starting with `ROW_START`: what the cache keeps (the path on every row was most of a
    table's bytes) and what a worker sends; `with_file_column` makes them table lines.

    Why not `csv.writer`: it checks every field of every row for characters to quote,
    and only free-text columns (and the path) can hold one (see schema.FREE_TEXT_COLUMNS).
    Here each relation is one `%` format over all its fields at once: formatting row by
    row in Python would cost more than extracting the file's facts. Files are rendered
    in the workers.
    """
    out = {}
    for relation, rows in facts.rows.items():
        if not rows:
            continue
        line = ROW_START + "\t".join(["%s"] * len(RELATIONS[relation][0])) + "\n"
        text = (line * len(rows)) % flat_fields(relation, rows, _field_column)
        if text.count(ROW_START) != len(rows):  # a field held a NUL: its rows could not be told apart
            raise ValueError(f"a {relation} field holds a NUL character")
        out[relation] = text
    return out


def with_file_column(path: str, rows: dict[str, str]) -> dict[str, str]:
    """`table_rows` text as table lines: the file's path, a tab, then the row (a field never
    holds `ROW_START`, so each one starts a row, also after a quoted newline)."""
    line_start = _field(path) + "\t"
    return {relation: text.replace(ROW_START, line_start) for relation, text in rows.items()}


def table_text(facts: FileFacts) -> dict[str, str]:
    """Each relation's rows of one file as TSV lines (no header), ready to append."""
    return with_file_column(facts.path, table_rows(facts))


class TableWriter:
    """Writes the tables incrementally, one file's facts at a time, so writing overlaps
    with analysis; each table appears (atomically, by rename) only when `commit` runs.

    Files may arrive in any order (workers finish when they finish): each file's lines are
    placed by the position it is added with, so the same input gives the same tables."""

    def __init__(self, out_dir: Path):
        out_dir.mkdir(parents=True, exist_ok=True)
        remove_stale(out_dir)
        self.out_dir = out_dir
        self.handles = {}
        self.segments: dict[str, list[tuple[int, int, int]]] = {}  # relation -> (position, offset, length)
        for relation, (cols, _) in RELATIONS.items():
            fd, tmp = tempfile.mkstemp(dir=out_dir, prefix=f".{relation}.", suffix=TEMP_SUFFIX)
            handle = os.fdopen(fd, "wb")
            self.handles[relation] = (handle, Path(tmp))
            handle.write(("\t".join(("file",) + cols) + "\n").encode())
            self.segments[relation] = []

    def add(self, facts: FileFacts, position: int = 0) -> None:
        self.add_text(table_text(facts), position)

    def add_text(self, tables: dict[str, str], position: int = 0) -> None:
        """Append one file's lines, rendered by `table_text` (or `with_file_column`); in the
        committed tables, a file's lines come in the order of `position`."""
        for relation, text in tables.items():
            handle = self.handles[relation][0]
            data = text.encode("utf-8")
            self.segments[relation].append((position, handle.tell(), len(data)))
            handle.write(data)

    def commit(self) -> list[Path]:
        written = []
        mode = new_file_mode()
        for relation, (handle, tmp) in self.handles.items():
            handle.close()
            segments = self.segments[relation]
            if any(a[0] > b[0] for a, b in zip(segments, segments[1:])):
                tmp = _in_position_order(tmp, segments, f".{relation}.")
            os.chmod(tmp, mode)
            target = self.out_dir / f"{relation}.tsv"
            os.replace(tmp, target)
            written.append(target)
        self.handles = {}
        return written

    def abort(self) -> None:
        for handle, tmp in self.handles.values():
            handle.close()
            tmp.unlink(missing_ok=True)
        self.handles = {}


def _in_position_order(tmp: Path, segments: list[tuple[int, int, int]], prefix: str) -> Path:
    """A copy of a table's temporary file (header, then segments) with the segments in
    position order (files added at one position keep the order they came in); the
    original is removed."""
    fd, ordered = tempfile.mkstemp(dir=tmp.parent, prefix=prefix, suffix=TEMP_SUFFIX)
    try:
        with open(tmp, "rb") as source, os.fdopen(fd, "wb") as target:
            target.write(source.read(segments[0][1]))  # the header
            for _position, offset, length in sorted(segments, key=lambda segment: segment[0]):
                source.seek(offset)
                target.write(source.read(length))
    except BaseException:
        Path(ordered).unlink(missing_ok=True)
        raise
    tmp.unlink()
    return Path(ordered)


def write_tables(all_facts: list[FileFacts], out_dir: Path) -> list[Path]:
    """Write every relation of every file to `out_dir/<relation>.tsv`; return the paths."""
    writer = TableWriter(out_dir)
    try:
        for facts in all_facts:
            writer.add(facts)
    except BaseException:
        writer.abort()
        raise
    return writer.commit()


def read_tables(facts_dir: Path) -> list[FileFacts]:
    """Read the tables written by `write_tables` back into per-file facts; a table that is
    not one (wrong columns, a value of the wrong type, unparsable) raises `AdopterError`."""
    import pandas as pd  # only here: importing pandas would slow every command's start-up

    by_file: dict[str, FileFacts] = {}
    for relation, (cols, _) in RELATIONS.items():
        path = facts_dir / f"{relation}.tsv"
        if not path.exists():
            continue
        dtypes = {c: ("int64" if c in INT_COLUMNS else "string") for c in cols}
        try:
            header = pd.read_csv(path, sep="\t", nrows=0).columns.tolist()
            if header != ["file", *cols]:
                raise ValueError(f"columns are {', '.join(header)}; a {relation} table has file, {', '.join(cols)}")
            frame = pd.read_csv(path, sep="\t", dtype={"file": "string", **dtypes}, keep_default_na=False,
                                quoting=csv.QUOTE_MINIMAL)
        except (ValueError, UnicodeDecodeError, OSError, pd.errors.ParserError) as error:
            reason = " ".join(str(error).split())
            raise AdopterError(Diagnostic(str(path), None, None, f"not a fact table: {reason}")) from None
        for file, group in frame.groupby("file", sort=False):
            facts = by_file.setdefault(file, FileFacts(file))
            facts.rows[relation] = [tuple(_plain(v) for v in row)
                                    for row in group[list(cols)].itertuples(index=False, name=None)]
    return list(by_file.values())


def _plain(value):
    return int(value) if hasattr(value, "dtype") or isinstance(value, int) else str(value)
