"""Fact tables on disk: one TSV per relation, a header row, a leading `file` column.

Tables are written atomically (a reader never sees half a table) and read back with
pandas into one `FileFacts` per source file.
"""

from __future__ import annotations

import csv
import os
import tempfile
from pathlib import Path

from extractor.python_facts import FileFacts
from extractor.schema import INT_COLUMNS, RELATIONS


class TableWriter:
    """Writes the tables incrementally, one file's facts at a time, so writing overlaps
    with analysis; each table appears (atomically, by rename) only when `commit` runs."""

    def __init__(self, out_dir: Path):
        out_dir.mkdir(parents=True, exist_ok=True)
        self.out_dir = out_dir
        self.handles = {}
        self.writers = {}
        for relation, (cols, _) in RELATIONS.items():
            fd, tmp = tempfile.mkstemp(dir=out_dir, prefix=f".{relation}.", suffix=".tmp")
            handle = os.fdopen(fd, "w", encoding="utf-8", newline="")
            self.handles[relation] = (handle, Path(tmp))
            self.writers[relation] = csv.writer(handle, delimiter="\t", lineterminator="\n")
            self.writers[relation].writerow(("file",) + cols)

    def add(self, facts: FileFacts) -> None:
        for relation, rows in facts.rows.items():
            path = facts.path
            self.writers[relation].writerows((path,) + row for row in rows)

    def commit(self) -> list[Path]:
        written = []
        for relation, (handle, tmp) in self.handles.items():
            handle.close()
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
    """Read the tables written by `write_tables` back into per-file facts."""
    import pandas as pd  # only here: pandas costs a third of a second at start-up

    by_file: dict[str, FileFacts] = {}
    for relation, (cols, _) in RELATIONS.items():
        path = facts_dir / f"{relation}.tsv"
        if not path.exists():
            continue
        dtypes = {c: ("int64" if c in INT_COLUMNS else "string") for c in cols}
        frame = pd.read_csv(path, sep="\t", dtype={"file": "string", **dtypes}, keep_default_na=False,
                            quoting=csv.QUOTE_MINIMAL)
        for file, group in frame.groupby("file", sort=False):
            facts = by_file.setdefault(file, FileFacts(file))
            facts.rows[relation] = [tuple(_plain(v) for v in row)
                                    for row in group[list(cols)].itertuples(index=False, name=None)]
    return list(by_file.values())


def _plain(value):
    return int(value) if hasattr(value, "dtype") or isinstance(value, int) else str(value)
