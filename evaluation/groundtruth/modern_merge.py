"""Merge the modern sample's ground-truth parts (`modern/parts/*.tsv`, one per reader, each
read from the code) into `modern/locations.tsv`, checking every row against the sample and
the bundled rules. Run after editing a part: `python -m evaluation.groundtruth.modern_merge`."""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd

from adopter.support.atomic import atomic_write_text

HERE = Path(__file__).resolve().parent / "modern"
SAMPLE = Path(__file__).resolve().parents[1] / "modern" / "sample.tsv"
RULES = Path(__file__).resolve().parents[2] / "adopter" / "rules"
COLUMNS = ["corpus", "path", "rule", "scope", "line", "col", "note"]


def read_table(path: Path) -> pd.DataFrame:
    return pd.read_csv(path, sep="\t", dtype=str, keep_default_na=False)


def location_problems(locations: pd.DataFrame, files: set[tuple[str, str]], key: str, known: set[str],
                      corpus: str) -> list[str]:
    """One line per row that cannot be right: a file outside `files` (those of `corpus`), a
    `key` column value outside `known`, a position that is not a number, a duplicate."""
    found = []
    for row in locations.itertuples():
        where = f"{row.corpus}/{row.path}:{row.line}"
        if (row.corpus, row.path) not in files:
            found.append(f"{where}: not a file of {corpus}")
        if getattr(row, key) not in known:
            found.append(f"{where}: unknown {key} {getattr(row, key)!r}")
        if not (row.line.isdigit() and row.col.isdigit()):
            found.append(f"{where}: line and col must be numbers")
    duplicated = locations.duplicated(["corpus", "path", key, "line", "col"], keep=False)
    found += [f"{r.corpus}/{r.path}:{r.line}:{r.col}: {getattr(r, key)} twice" for r in locations[duplicated].itertuples()]
    return found


def merge_parts(folder: Path, columns: list[str], key: str, problems) -> pd.DataFrame:
    """The parts' rows (`folder/*.tsv`), checked by `problems` (SystemExit with every problem),
    with integer positions, sorted by place."""
    locations = pd.concat([read_table(p) for p in sorted(folder.glob("*.tsv"))], ignore_index=True)[columns]
    bad = problems(locations)
    if bad:
        raise SystemExit("\n".join(bad))
    locations = locations.assign(line=locations["line"].astype(int), col=locations["col"].astype(int))
    return locations.sort_values(["corpus", "path", "line", "col", key], ignore_index=True)


def problems(locations: pd.DataFrame, sample: pd.DataFrame, rules: set[str]) -> list[str]:
    """The rows that cannot be right (location_problems), against the sample and the bundled rules."""
    return location_problems(locations, set(zip(sample["corpus"], sample["path"])), "rule", rules, "the sample")


def merge() -> pd.DataFrame:
    rules = {p.stem for p in RULES.glob("*/*.adopt")}
    return merge_parts(HERE / "parts", COLUMNS, "rule", lambda locations: problems(locations, read_table(SAMPLE), rules))


if __name__ == "__main__":
    merged = merge()
    atomic_write_text(HERE / "locations.tsv", merged.to_csv(sep="\t", index=False))
    print(f"{len(merged)} locations in {merged['path'].nunique()} files")
    print(merged.groupby(["rule", "corpus"]).size().unstack(fill_value=0).to_string())
    sys.exit(0)
