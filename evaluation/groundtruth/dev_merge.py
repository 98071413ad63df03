"""Merge the development corpus's ground-truth parts (`dev/parts/*.tsv`, one per reader, each
read from the code) into `dev/locations.tsv`, checking every row against the corpus manifest
and the families of `dev/README.md`. Run after editing a part:
`python -m evaluation.groundtruth.dev_merge`."""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd

from adopter.support.atomic import atomic_write_text
from evaluation.groundtruth.modern_merge import location_problems, merge_parts
from evaluation.zoo_modern import load_manifest

HERE = Path(__file__).resolve().parent / "dev"
MANIFEST = Path(__file__).resolve().parents[1] / "dev" / "MANIFEST.tsv"
COLUMNS = ["corpus", "path", "family", "scope", "line", "col", "spelling", "needs", "note"]
FAMILIES = {"softmax", "attention", "rms_norm", "rotary", "swiglu", "conv_batchnorm", "dropout_layernorm"}
NEEDS = {"", "project"}


def problems(locations: pd.DataFrame, files: set[tuple[str, str]]) -> list[str]:
    """One line per row that cannot be right: modern_merge's location_problems (a file outside
    the corpus, an unknown family, a position that is not a number, a duplicate), and a `needs`
    that is not one of NEEDS."""
    found = location_problems(locations, files, "family", FAMILIES, "the development corpus")
    found += [f"{r.corpus}/{r.path}:{r.line}: needs is {r.needs!r}, not one of {sorted(NEEDS)}"
              for r in locations.itertuples() if r.needs not in NEEDS]
    return found


def merge() -> pd.DataFrame:
    files = set(load_manifest(MANIFEST))
    return merge_parts(HERE / "parts", COLUMNS, "family", lambda locations: problems(locations, files))


if __name__ == "__main__":
    merged = merge()
    atomic_write_text(HERE / "locations.tsv", merged.to_csv(sep="\t", index=False))
    print(f"{len(merged)} locations in {merged['path'].nunique()} files")
    print(merged.groupby(["family", "corpus"]).size().unstack(fill_value=0).to_string())
    sys.exit(0)
