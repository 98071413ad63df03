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


def problems(locations: pd.DataFrame, sample: pd.DataFrame, rules: set[str]) -> list[str]:
    """One line per row that cannot be right: a file outside the sample, an unknown rule,
    a position that is not a number, a duplicate."""
    sampled = set(zip(sample["corpus"], sample["path"]))
    found = []
    for row in locations.itertuples():
        where = f"{row.corpus}/{row.path}:{row.line}"
        if (row.corpus, row.path) not in sampled:
            found.append(f"{where}: not a file of the sample")
        if row.rule not in rules:
            found.append(f"{where}: unknown rule {row.rule!r}")
        if not (row.line.isdigit() and row.col.isdigit()):
            found.append(f"{where}: line and col must be numbers")
    duplicated = locations.duplicated(["corpus", "path", "rule", "line", "col"], keep=False)
    found += [f"{r.corpus}/{r.path}:{r.line}: {r.rule} twice" for r in locations[duplicated].itertuples()]
    return found


def merge() -> pd.DataFrame:
    parts = sorted((HERE / "parts").glob("*.tsv"))
    locations = pd.concat([read_table(p) for p in parts], ignore_index=True)[COLUMNS]
    bad = problems(locations, read_table(SAMPLE), {p.stem for p in RULES.glob("*/*.adopt")})
    if bad:
        raise SystemExit("\n".join(bad))
    locations = locations.assign(line=locations["line"].astype(int), col=locations["col"].astype(int))
    return locations.sort_values(["corpus", "path", "line", "col", "rule"], ignore_index=True)


if __name__ == "__main__":
    merged = merge()
    atomic_write_text(HERE / "locations.tsv", merged.to_csv(sep="\t", index=False))
    print(f"{len(merged)} locations in {merged['path'].nunique()} files")
    print(merged.groupby(["rule", "corpus"]).size().unstack(fill_value=0).to_string())
    sys.exit(0)
