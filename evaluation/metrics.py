"""Precision and recall of scan matches against the location-level ground truth, and
against the paper's per-model counts.

A location is (model, rule, class, line); the model is the zoo file's name without
`modeling_`. Count level: per (model, rule), min(ours, paper) are true positives.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

KEY = ["model", "rule", "class", "line"]


def model_of(file: str) -> str:
    return Path(file).stem.removeprefix("modeling_")


def locations_frame(records) -> pd.DataFrame:
    """Distinct locations (`model rule class line`) of match records (dicts with rule, file, class, line)."""
    frame = pd.DataFrame(list(records), columns=["rule", "file", "class", "line"])
    frame["model"] = frame["file"].map(model_of)
    return frame[KEY].drop_duplicates()


def load_matches(jsonl: Path) -> pd.DataFrame:
    """The locations of a `adopter scan --format jsonl` file."""
    return locations_frame(json.loads(line) for line in jsonl.read_text().splitlines() if line.strip())


def matches_frame(matches) -> pd.DataFrame:
    """The locations of `adopter.matches.build.Match` objects."""
    return locations_frame(m.to_json() for m in matches)


def load_groundtruth(tsv: Path) -> pd.DataFrame:
    frame = pd.read_csv(tsv, sep="\t", dtype={"line": int}, keep_default_na=False)
    return frame[KEY + ["note"]]


def precision_recall(tp: int, fp: int, fn: int) -> tuple[float, float]:
    precision = tp / (tp + fp) if tp + fp else 1.0
    recall = tp / (tp + fn) if tp + fn else 1.0
    return round(precision, 4), round(recall, 4)


def location_summary(matches: pd.DataFrame, truth: pd.DataFrame, rules: list[str]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Per-rule summary (`rule gt tp fp fn precision recall`, plus `total`) and the
    differing locations (`kind` fp/fn)."""
    joined = matches.merge(truth[KEY], on=KEY, how="outer", indicator=True)
    joined = joined[joined["rule"].isin(rules)]  # other rules (the modern pack) have no ground truth
    rows = []
    for rule in rules + ["total"]:
        part = joined if rule == "total" else joined[joined["rule"] == rule]
        tp = int((part["_merge"] == "both").sum())
        fp = int((part["_merge"] == "left_only").sum())
        fn = int((part["_merge"] == "right_only").sum())
        rows.append((rule, tp + fn, tp, fp, fn, *precision_recall(tp, fp, fn)))
    summary = pd.DataFrame(rows, columns=["rule", "gt", "tp", "fp", "fn", "precision", "recall"])
    diff = joined[joined["_merge"] != "both"].copy()
    diff["kind"] = diff["_merge"].map({"left_only": "fp", "right_only": "fn"})
    return summary, diff[["kind"] + KEY].sort_values(KEY, ignore_index=True)


def count_summary(matches: pd.DataFrame, paper_counts: Path, rules: list[str]) -> pd.DataFrame:
    """Count-level comparison with the paper's table (same columns as the location summary)."""
    paper = pd.read_csv(paper_counts, sep="\t").melt(id_vars="model", var_name="rule", value_name="paper")
    ours = matches.groupby(["model", "rule"]).size().rename("ours").reset_index()
    both = paper.merge(ours, on=["model", "rule"], how="outer").fillna(0)
    both["tp"] = both[["paper", "ours"]].min(axis=1)
    both["fp"] = (both["ours"] - both["paper"]).clip(lower=0)
    both["fn"] = (both["paper"] - both["ours"]).clip(lower=0)
    rows = []
    for rule in rules + ["total"]:
        part = both if rule == "total" else both[both["rule"] == rule]
        tp, fp, fn = (int(part[c].sum()) for c in ("tp", "fp", "fn"))
        rows.append((rule, int(part["paper"].sum()), tp, fp, fn, *precision_recall(tp, fp, fn)))
    return pd.DataFrame(rows, columns=["rule", "gt", "tp", "fp", "fn", "precision", "recall"])
