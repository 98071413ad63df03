"""Where clingo's instantiation time goes, rule by rule, from `make clingo-debug`'s counts.

Run a command with the counting build and `GRINGO_RULE_STATS=FILE` set (every ground call,
forked workers included, appends one row per rule: calls, binder steps, nanoseconds, the
rule as clingo prints its instantiator), then sum the rows here:

    GRINGO_RULE_STATS=/tmp/rules.tsv PYTHONPATH=build/clingo-debug/site:. \\
        .venv/bin/python -m adopter scan hf_models --no-cache --format jsonl -o /tmp/m.jsonl
    .venv/bin/python -m evaluation.bench.rule_stats /tmp/rules.tsv --top 30

Rules are summed by their printed text, so a rule whose text holds a file's constant counts
once per file. The loading rules (`@input`) and the string and tuple functions (`@cat`,
`@size`, `@nth`) are also summed as groups: they call into Python.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

_CALLS = re.compile(r"=(input|cat|size|nth)\(")


@dataclass
class RuleCost:
    calls: int = 0
    steps: int = 0
    nanoseconds: int = 0


def read(path: Path) -> dict[str, RuleCost]:
    """The rows of a GRINGO_RULE_STATS file summed per rule; a row that does not parse (two
    processes' rows cut into each other) is skipped."""
    costs: dict[str, RuleCost] = defaultdict(RuleCost)
    with path.open(encoding="utf-8", errors="replace") as handle:
        for line in handle:
            fields = line.rstrip("\n").split("\t", 3)
            if len(fields) != 4 or not all(f.isdigit() for f in fields[:3]):
                continue
            cost = costs[fields[3]]
            cost.calls += int(fields[0])
            cost.steps += int(fields[1])
            cost.nanoseconds += int(fields[2])
    return dict(costs)


def group(rule: str) -> str:
    """`@input` for a loading rule, the functions it calls for one that calls into Python, else `rules`."""
    called = sorted(set(_CALLS.findall(rule)))
    return "@" + "/@".join(called) if called else "rules"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("stats", type=Path, help="a GRINGO_RULE_STATS file")
    parser.add_argument("--top", type=int, default=30, help="rules to list (default 30)")
    args = parser.parse_args(argv)
    costs = read(args.stats)
    total = sum(c.nanoseconds for c in costs.values()) or 1
    groups: dict[str, int] = defaultdict(int)
    for rule, cost in costs.items():
        groups[group(rule)] += cost.nanoseconds
    print(f"{len(costs)} rules, {total / 1e9:.2f} s of instantiation")
    for name, nanoseconds in sorted(groups.items(), key=lambda item: -item[1]):
        print(f"  {name:16s} {nanoseconds / 1e9:8.3f} s {100 * nanoseconds / total:5.1f}%")
    print(f"the {args.top} dearest rules (seconds, share, binder steps, rule):")
    for rule, cost in sorted(costs.items(), key=lambda item: -item[1].nanoseconds)[:args.top]:
        print(f"  {cost.nanoseconds / 1e9:7.3f} {100 * cost.nanoseconds / total:5.1f}% {cost.steps:10d}  {rule}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
