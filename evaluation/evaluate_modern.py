"""`make eval-modern`: scan the modern sample (evaluation/modern/sample.tsv, fetched by `make
zoo-modern`) with every bundled rule and score it against its ground truth
(evaluation/groundtruth/modern/locations.tsv): precision and recall per rule and corpus.

A location is (corpus, path, rule, line); one line can hold a location twice (two calls), so
locations are counted, not merely compared as sets. Writes build/eval-modern/matches.jsonl,
summary.tsv and differences.tsv (every false positive and false negative), and prints the
summary.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

import pandas as pd

from adopter.rules.registry import load_rules
from adopter.support.atomic import atomic_write_text
from evaluation.metrics import precision_recall
from evaluation.zoo_modern import module_root_options

HERE = Path(__file__).resolve().parent
SAMPLE = HERE / "modern" / "sample.tsv"
GROUNDTRUTH = HERE / "groundtruth" / "modern" / "locations.tsv"
# the rules of the payoff issue, read in the same way before the rules existed
PAYOFF_GROUNDTRUTH = HERE / "groundtruth" / "modern" / "payoff" / "locations.tsv"
KEY = ["corpus", "path", "rule", "line"]


def sample_files(sample: pd.DataFrame, corpora: Path) -> list[Path]:
    files = [corpora / corpus / path for corpus, path in zip(sample["corpus"], sample["path"])]
    missing = [str(f) for f in files if not f.exists()]
    if missing:
        raise SystemExit(f"{missing[0]}: error: not fetched (run `make zoo-modern`); {len(missing)} files missing")
    return files


def scan(files: list[Path], out: Path) -> None:
    """`adopter scan` over the sampled files, cold, as a user runs it."""
    command = [sys.executable, "-m", "adopter", "scan", *map(str, files), "--format", "jsonl", "-o", str(out), "--no-cache",
               *module_root_options(files)]
    subprocess.run(command, check=False)  # a file that fails is a diagnostic; its matches are missing


def found_locations(matches: Path, corpora: Path, line_of=lambda record: int(record["line"])) -> pd.DataFrame:
    """The scan's locations, keyed like the ground truth (corpus and path inside it); `line_of`
    reads a record's line where a ground truth anchors a rule elsewhere than its reported line."""
    rows = []
    for line in matches.read_text().splitlines():
        if line.strip():
            record = json.loads(line)
            corpus, path = Path(record["file"]).resolve().relative_to(corpora.resolve()).as_posix().split("/", 1)
            rows.append((corpus, path, record["rule"], line_of(record)))
    return pd.DataFrame(rows, columns=KEY)


def unscored(found: pd.DataFrame, truth: pd.DataFrame) -> tuple[pd.DataFrame, dict[str, int]]:
    """The locations of rules the ground truth has no row for (a new rule, before its ground
    truth is written by reading), set aside with their counts: scoring them would call every
    match a false positive. The others, to score."""
    new = found[~found["rule"].isin(set(truth["rule"]))]
    return found[found["rule"].isin(set(truth["rule"]))], new["rule"].value_counts().sort_index().to_dict()


def summary(found: pd.DataFrame, truth: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Per rule and corpus (and each rule over all corpora, and the total): `gt tp fp fn
    precision recall`; and the differing locations, one row per missing or extra count."""
    counts = (found.value_counts(KEY).rename("found").to_frame()
              .join(truth.value_counts(KEY).rename("gt"), how="outer").fillna(0).astype(int).reset_index())
    counts["tp"] = counts[["found", "gt"]].min(axis=1)
    counts["fp"], counts["fn"] = counts["found"] - counts["tp"], counts["gt"] - counts["tp"]
    rows = []
    groups = [(rule, corpus, part) for (rule, corpus), part in counts.groupby(["rule", "corpus"])]
    groups += [(rule, "all", part) for rule, part in counts.groupby("rule")] + [("total", "all", counts)]
    for rule, corpus, part in groups:
        tp, fp, fn = (int(part[c].sum()) for c in ("tp", "fp", "fn"))
        rows.append((rule, corpus, tp + fn, tp, fp, fn, *precision_recall(tp, fp, fn)))
    table = pd.DataFrame(rows, columns=["rule", "corpus", "gt", "tp", "fp", "fn", "precision", "recall"])
    differing = counts[(counts["fp"] > 0) | (counts["fn"] > 0)]
    return table, differing[KEY + ["found", "gt"]].sort_values(KEY, ignore_index=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpora", type=Path, default=Path("modern_models"))
    parser.add_argument("--out", type=Path, default=Path("build/eval-modern"))
    parser.add_argument("--matches", type=Path, help="score this scan output instead of scanning")
    args = parser.parse_args(argv)
    sample = pd.read_csv(SAMPLE, sep="\t", dtype=str)
    matches = args.matches
    if matches is None:
        matches = args.out / "matches.jsonl"
        matches.parent.mkdir(parents=True, exist_ok=True)
        scan(sample_files(sample, args.corpora), matches)
    truth = pd.concat([pd.read_csv(table, sep="\t", dtype={"line": int}, keep_default_na=False)[KEY]
                       for table in (GROUNDTRUTH, PAYOFF_GROUNDTRUTH)], ignore_index=True)
    bundled = {rule.id for rule in load_rules()}
    waiting = truth[~truth["rule"].isin(bundled)]["rule"].value_counts().sort_index().to_dict()
    truth = truth[truth["rule"].isin(bundled)]  # rows read ahead of their rule: not scored until it exists
    scored, not_scored = unscored(found_locations(matches, args.corpora), truth)
    table, differing = summary(scored, truth)
    atomic_write_text(args.out / "summary.tsv", table.to_csv(sep="\t", index=False))
    atomic_write_text(args.out / "differences.tsv", differing.to_csv(sep="\t", index=False))
    print(f"Modern sample ({len(sample)} files), against {GROUNDTRUTH.name} and payoff/{PAYOFF_GROUNDTRUTH.name} "
          f"({args.out}/summary.tsv):")
    print(table.to_string(index=False))
    print(f"\n{len(differing)} differing locations in {args.out}/differences.tsv")
    for rule, count in not_scored.items():
        print(f"{rule}: {count} locations found, not scored: the ground truth has no row for this rule yet")
    for rule, count in waiting.items():
        print(f"{rule}: {count} ground-truth locations, not scored: no bundled rule has this id yet")
    return 0


if __name__ == "__main__":
    sys.exit(main())
