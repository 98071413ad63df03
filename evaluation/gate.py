"""The CI gate: fail when any rule's precision or recall falls below the committed floor
`evaluation/baseline.tsv` (the zoo) or `evaluation/baseline_modern.tsv` (the modern sample,
`--summary build/eval-modern/summary.tsv`); raising a floor is a deliberate commit."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pandas as pd

FLOOR = Path(__file__).resolve().parent / "baseline.tsv"


def regressions(summary: pd.DataFrame, floor: pd.DataFrame) -> list[str]:
    """One line per rule and metric below its floor (a rule missing from the summary fails too).
    A summary per rule and corpus (`make eval-modern`) is judged on its rows over all corpora."""
    if "corpus" in summary.columns:
        summary = summary[summary["corpus"] == "all"]
    measured = summary.set_index("rule")
    problems = []
    for row in floor.itertuples(index=False):
        if row.rule not in measured.index:
            problems.append(f"{row.rule}: missing from the evaluation")
            continue
        for metric in ("precision", "recall"):
            value, minimum = float(measured.loc[row.rule, metric]), float(getattr(row, metric))
            if value < minimum:
                problems.append(f"{row.rule}: {metric} {value:.4f} < floor {minimum:.4f}")
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--summary", type=Path, default=Path("build/eval/summary.tsv"))
    parser.add_argument("--floor", type=Path, default=FLOOR)
    args = parser.parse_args(argv)
    problems = regressions(pd.read_csv(args.summary, sep="\t"), pd.read_csv(args.floor, sep="\t"))
    for problem in problems:
        print(f"{args.summary}: error: {problem}", file=sys.stderr)
    print(f"gate: {len(problems)} regressions against {args.floor.name}" if problems
          else f"gate: every rule at or above {args.floor.name}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
