"""Fact tables on disk: one TSV per relation, a header row, a leading `file` column.

Tables are written atomically (a reader never sees half a table) and read back with
pandas into one `FileFacts` per source file.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pandas as pd

from adopter.atomic import atomic_write_text
from extractor.python_facts import FileFacts
from extractor.schema import INT_COLUMNS, RELATIONS


def write_tables(all_facts: list[FileFacts], out_dir: Path) -> list[Path]:
    """Write every relation of every file to `out_dir/<relation>.tsv`; return the paths."""
    written = []
    for relation, (cols, _) in RELATIONS.items():
        buffer = io.StringIO()
        writer = csv.writer(buffer, delimiter="\t", lineterminator="\n", quoting=csv.QUOTE_MINIMAL)
        writer.writerow(("file",) + cols)
        for facts in all_facts:
            for row in facts.rows[relation]:
                writer.writerow((facts.path,) + row)
        path = out_dir / f"{relation}.tsv"
        atomic_write_text(path, buffer.getvalue())
        written.append(path)
    return written


def read_tables(facts_dir: Path) -> list[FileFacts]:
    """Read the tables written by `write_tables` back into per-file facts."""
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
