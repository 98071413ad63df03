"""`python -m evaluation.softmax_census CORPUS MATCHES`: which functional softmax calls a scan found.

Lists every call spelled `F.softmax(`, `functional.softmax(` or `nn.functional.softmax(` in
the corpus's source (a line census, comment lines skipped), and whether a `softmax` match of
the scan (JSONL, `adopter scan CORPUS --format jsonl`) has a node on that line. Prints the
count, the share found and every call not found, to be read by hand: a call outside every
forward path (`generate`, a function nothing calls, a docstring) is not a miss of the rule.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

CALL = re.compile(r"(?:\bnn\.functional|\bF|(?<![\w.])functional)\.softmax\(")


def census(corpus: Path) -> list[tuple[str, int]]:
    """(file below the corpus, line) of every functional softmax call, once per call."""
    calls = []
    for path in sorted(corpus.rglob("*.py")):
        for number, text in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if not text.lstrip().startswith("#"):
                calls += [(path.relative_to(corpus).as_posix(), number)] * len(CALL.findall(text))
    return calls


def found_lines(matches: Path, corpus: Path) -> set[tuple[str, int]]:
    """(file below the corpus, line) of every node of the scan's `softmax` matches."""
    found = set()
    for line in matches.read_text(encoding="utf-8").splitlines():
        match = json.loads(line)
        if match["rule"] == "softmax":
            relative = Path(match["file"]).resolve().relative_to(corpus.resolve()).as_posix()
            found |= {(relative, node["span"][0]) for node in match["nodes"]}
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("corpus", type=Path)
    parser.add_argument("matches", type=Path, help="the scan's JSONL")
    args = parser.parse_args(argv)
    calls, found = census(args.corpus), found_lines(args.matches, args.corpus)
    missed = [call for call in calls if call not in found]
    share = (len(calls) - len(missed)) / len(calls) if calls else 1.0
    print(f"{len(calls)} functional softmax calls, {len(calls) - len(missed)} on a line a softmax match has "
          f"({share:.3f}); not found:")
    for file, line in missed:
        print(f"  {file}:{line}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
