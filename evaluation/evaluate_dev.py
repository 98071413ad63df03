"""`make eval-dev`: scan the development corpus (litgpt, torchtitan, torchvision, x-transformers;
`make zoo-dev`) with every bundled rule and score it per family and corpus against the ground
truth written by reading it (evaluation/groundtruth/dev/locations.tsv), over every spelling.

A location is (corpus, path, family, line): a rule's matches count for the family its id
names (`FAMILY_OF_RULE`), at the line of the match, which each family's rules put at the ground
truth's anchor (or, for `ANCHORED_AT_FIRST_NODE`, at the line of the rule's first forward node). Rows that need another file of the project (`needs` =
`project`) are scored apart, in the summary's `project` row: how many of them the
whole-project analysis finds (a match there is never a false positive of its family). Writes
build/eval-dev/matches.jsonl, summary.tsv and differences.tsv, and prints the summary.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pandas as pd

from adopter.support.atomic import atomic_write_text
from evaluation.evaluate_modern import KEY, found_locations, scan, summary
from evaluation.zoo_modern import load_manifest

HERE = Path(__file__).resolve().parent
MANIFEST = HERE / "dev" / "MANIFEST.tsv"
GROUNDTRUTH = HERE / "groundtruth" / "dev" / "locations.tsv"
# A bundled rule id and the ground truth's family of it, where the two differ.
FAMILY_OF_RULE = {"manual_attention": "attention", "rms_norm_upcast": "rms_norm"}
# Families the ground truth anchors at the rule's first forward node even where a match is
# reported at another (a gated MLP split in halves is reported at the activation, the
# projection it keeps being no place of the fusion; the README anchors it at the projection).
ANCHORED_AT_FIRST_NODE = {"swiglu"}


def anchor_line(record: dict) -> int:
    """The line the ground truth's anchor for the record's family is on. (A first node that runs in
    a helper, torchtitan's `self._grouped_mm(...)`, is anchored at the helper's call in the match's
    function: the line the match reports.)"""
    if FAMILY_OF_RULE.get(record["rule"], record["rule"]) in ANCHORED_AT_FIRST_NODE and record["nodes"] \
            and record["nodes"][0]["function"] == record["function"]:
        return int(record["nodes"][0]["span"][0])
    return int(record["line"])


def corpus_files(corpora: Path) -> list[Path]:
    files = [corpora / corpus / path for corpus, path in sorted(load_manifest(MANIFEST))]
    missing = [str(f) for f in files if not f.exists()]
    if missing:
        raise SystemExit(f"{missing[0]}: error: not fetched (run `make zoo-dev`); {len(missing)} files missing")
    return files


def by_family(found: pd.DataFrame) -> pd.DataFrame:
    """The scan's locations with each rule's family in the `rule` column, the key `summary` scores."""
    return found.assign(rule=found["rule"].map(lambda rule: FAMILY_OF_RULE.get(rule, rule)))


def score(found: pd.DataFrame, truth: pd.DataFrame):
    """The summary and the differing locations of `found` (keyed by family) against the ground
    truth's rows that the file alone shows; the found locations that need other files (neither
    scored nor false positives); and those of families the corpus was not read for."""
    scored = truth[truth["needs"] == ""].rename(columns={"family": "rule"})
    project = truth[truth["needs"] == "project"].rename(columns={"family": "rule"})
    families = set(truth["family"])
    other = found[~found["rule"].isin(families)]
    found = found[found["rule"].isin(families)]
    ahead = found.merge(project[KEY], on=KEY)
    kept = found.merge(ahead.drop_duplicates(), on=KEY, how="left", indicator=True)
    table, differing = summary(kept[kept["_merge"] == "left_only"][KEY], scored)
    return table, differing, ahead, other


def project_row(project: pd.DataFrame, ahead: pd.DataFrame) -> pd.DataFrame:
    """The summary's row of the locations that need other files of their project."""
    found = len(ahead.drop_duplicates())
    return pd.DataFrame([{"rule": "project", "corpus": "all", "gt": len(project), "tp": found, "fp": 0,
                          "fn": len(project) - found, "precision": 1.0,
                          "recall": round(found / len(project), 4) if len(project) else 1.0}])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpora", type=Path, default=Path("dev_models"))
    parser.add_argument("--out", type=Path, default=Path("build/eval-dev"))
    parser.add_argument("--matches", type=Path, help="score this scan output instead of scanning")
    args = parser.parse_args(argv)
    matches = args.matches
    if matches is None:
        matches = args.out / "matches.jsonl"
        matches.parent.mkdir(parents=True, exist_ok=True)
        scan(corpus_files(args.corpora), matches)
    truth = pd.read_csv(GROUNDTRUTH, sep="\t", dtype={"line": int}, keep_default_na=False)
    project = truth[truth["needs"] == "project"]
    table, differing, ahead, other = score(by_family(found_locations(matches, args.corpora, anchor_line)), truth)
    table = pd.concat([table, project_row(project, ahead)], ignore_index=True)
    atomic_write_text(args.out / "summary.tsv", table.to_csv(sep="\t", index=False))
    atomic_write_text(args.out / "differences.tsv", differing.to_csv(sep="\t", index=False))
    print(f"Development corpus, against {GROUNDTRUTH.name}, every spelling ({args.out}/summary.tsv):")
    print(table.to_string(index=False))
    print(f"\n{len(differing)} differing locations in {args.out}/differences.tsv")
    if len(project):
        print(f"{len(project)} locations need other files of their project (whole-project analysis; the `project` row): "
              + ", ".join(f"{family} {n}" for family, n in project["family"].value_counts().sort_index().items())
              + f"; {len(ahead)} of them found")
    for rule, count in other["rule"].value_counts().sort_index().items():
        print(f"{rule}: {count} matches of a family the ground truth was not read for, not scored")
    return 0


if __name__ == "__main__":
    sys.exit(main())
