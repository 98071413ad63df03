"""`make eval`: score `build/matches.jsonl` against the location-level ground truth and the
paper's counts. Writes `build/eval/summary.tsv` (docs/evaluation.md), `count_summary.tsv` and
`differences.tsv` (every false positive and false negative), and prints the tables."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from adopter.support.atomic import atomic_write_text
from evaluation.groundtruth import PAPER_COUNTS
from evaluation.groundtruth.merge_parts import RULE_ORDER
from evaluation.metrics import count_summary, load_groundtruth, load_matches, location_summary

GROUNDTRUTH = Path(__file__).resolve().parent / "groundtruth" / "paper_locations.tsv"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--matches", type=Path, default=Path("build/matches.jsonl"))
    parser.add_argument("--groundtruth", type=Path, default=GROUNDTRUTH)
    parser.add_argument("--counts", type=Path, default=PAPER_COUNTS)
    parser.add_argument("--out", type=Path, default=Path("build/eval"))
    parser.add_argument("--zoo", type=Path, default=Path("hf_models"))
    parser.add_argument("--ablations", action="store_true", help="Also run the ablation variants (Table 3).")
    args = parser.parse_args(argv)
    if not args.matches.exists():
        print(f"{args.matches}: error: no matches file (run `make match`)", file=sys.stderr)
        return 2
    matches = load_matches(args.matches)
    matches = matches[matches["rule"].isin(RULE_ORDER)]  # the ground truth covers the paper's nine rules
    summary, differences = location_summary(matches, load_groundtruth(args.groundtruth), RULE_ORDER)
    counts = count_summary(matches, args.counts, RULE_ORDER)
    atomic_write_text(args.out / "summary.tsv", summary.to_csv(sep="\t", index=False))
    atomic_write_text(args.out / "count_summary.tsv", counts.to_csv(sep="\t", index=False))
    atomic_write_text(args.out / "differences.tsv", differences.to_csv(sep="\t", index=False))
    print(f"Location level, against {args.groundtruth.name} ({args.out}/summary.tsv):")
    print(summary.to_string(index=False))
    print(f"\nCount level, against the paper's counts ({args.out}/count_summary.tsv):")
    print(counts.to_string(index=False))
    print(f"\n{len(differences)} differing locations in {args.out}/differences.tsv")
    if args.ablations:
        from evaluation.ablation import run_ablations, table3
        ablation = run_ablations(args.zoo, args.groundtruth, args.out)
        print(f"\nAblations, precision (P) and recall (R) per rule ({args.out}/ablation.tsv):")
        print(table3(ablation).to_string())
    return 0


if __name__ == "__main__":
    sys.exit(main())
