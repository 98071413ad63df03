"""Merge the development corpus's ground-truth parts (`dev/parts/*.tsv`, one per reader, each
read from the code) into `dev/locations.tsv`, checking every row against the corpus manifest
and the families of `dev/README.md`. Run after editing a part:
`python -m evaluation.groundtruth.dev_merge`."""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd

from adopter.support.atomic import atomic_write_text
from evaluation.zoo_modern import load_manifest

HERE = Path(__file__).resolve().parent / "dev"
MANIFEST = Path(__file__).resolve().parents[1] / "dev" / "MANIFEST.tsv"
COLUMNS = ["corpus", "path", "family", "scope", "line", "col", "spelling", "needs", "note"]
FAMILIES = {"softmax", "attention", "rms_norm", "rotary", "swiglu", "conv_batchnorm", "dropout_layernorm"}
NEEDS = {"", "project"}


def read_table(path: Path) -> pd.DataFrame:
    return pd.read_csv(path, sep="\t", dtype=str, keep_default_na=False)


def problems(locations: pd.DataFrame, files: set[tuple[str, str]]) -> list[str]:
    """One line per row that cannot be right: a file outside the corpus, an unknown family or
    `needs`, a position that is not a number, a duplicate."""
    found = []
    for row in locations.itertuples():
        where = f"{row.corpus}/{row.path}:{row.line}"
        if (row.corpus, row.path) not in files:
            found.append(f"{where}: not a file of the development corpus")
        if row.family not in FAMILIES:
            found.append(f"{where}: unknown family {row.family!r}")
        if row.needs not in NEEDS:
            found.append(f"{where}: needs is {row.needs!r}, not one of {sorted(NEEDS)}")
        if not (row.line.isdigit() and row.col.isdigit()):
            found.append(f"{where}: line and col must be numbers")
    duplicated = locations.duplicated(["corpus", "path", "family", "line", "col"], keep=False)
    found += [f"{r.corpus}/{r.path}:{r.line}:{r.col}: {r.family} twice" for r in locations[duplicated].itertuples()]
    return found


def merge() -> pd.DataFrame:
    parts = sorted((HERE / "parts").glob("*.tsv"))
    locations = pd.concat([read_table(p) for p in parts], ignore_index=True)[COLUMNS]
    bad = problems(locations, set(load_manifest(MANIFEST)))
    if bad:
        raise SystemExit("\n".join(bad))
    locations = locations.assign(line=locations["line"].astype(int), col=locations["col"].astype(int))
    return locations.sort_values(["corpus", "path", "line", "col", "family"], ignore_index=True)


if __name__ == "__main__":
    merged = merge()
    atomic_write_text(HERE / "locations.tsv", merged.to_csv(sep="\t", index=False))
    print(f"{len(merged)} locations in {merged['path'].nunique()} files")
    print(merged.groupby(["family", "corpus"]).size().unstack(fill_value=0).to_string())
    sys.exit(0)
