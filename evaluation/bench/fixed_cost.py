"""`make bench-fixed`: what grounding costs a file before it has any facts to ground.

Every file's clingo run converts, orders and indexes each rule of the program again
(clingo keeps no ground form of a rule between runs), so each file pays a share that
grows with the program and not with the file. This measures that share as a cold run's
worker pays it: the parent loads and prepares the programs once (`engine.prepare`), and
each sample is one fork grounding a one-line file (`x = 1`), CPU time of the ground only.

Program sets, cumulative: the analyses (`main.lp`), then the match programs, then the
compiled bundled rules. Each set is measured in a process of its own: controls that an
earlier set left in the same process change what the next one measures.
Writes build/bench/fixed.tsv (programs, median_ms, min_ms, samples) and prints it.
"""

from __future__ import annotations

import argparse
import gc
import json
import statistics
import subprocess
import sys
from pathlib import Path

from adopter.datalog.engine import MAIN_PROGRAM, MATCH_PROGRAMS, fact_terms, ground, prepare, relations_read
from adopter.extract.python_facts import extract_source
from adopter.matches.build import rules_program
from adopter.matches.structures import SUMMARY_MAX_GUARDS, forward_structure_parts
from adopter.rules.registry import load_rules
from evaluation.bench.measure import cpu_in_fork, write_table

SETS = ("analyses", "analyses + match programs", "analyses + match programs + compiled rules")
ONE_LINE_FILE = "x = 1\n"


def _programs(which: str) -> tuple[tuple[Path, ...], str]:
    if which == SETS[0]:
        return (MAIN_PROGRAM,), ""
    programs = (MAIN_PROGRAM, *MATCH_PROGRAMS)
    return programs, rules_program(load_rules()) if which == SETS[2] else ""


def samples(which: str, forks: int) -> list[float]:
    """CPU seconds of grounding the one-line file, once per fork of a prepared parent."""
    programs, text = _programs(which)
    facts = fact_terms(extract_source(ONE_LINE_FILE, "one_line.py"), relations_read(programs, text))
    parts = forward_structure_parts(SUMMARY_MAX_GUARDS)
    prepare(programs, text)  # (each fork takes its copy of the prepared control; the parent keeps its own)
    gc.freeze()
    def ground_only() -> None:
        ground(programs, text, parts, facts)

    out = [cpu_in_fork(ground_only)[0] for _ in range(forks)]
    gc.unfreeze()
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--forks", type=int, default=21, help="samples per program set (default 21)")
    parser.add_argument("--out", type=Path, default=Path("build/bench"))
    parser.add_argument("--set", choices=SETS, help=argparse.SUPPRESS)  # one set, in this process
    args = parser.parse_args(argv)
    if args.set:
        print(json.dumps(samples(args.set, args.forks)))
        return 0
    import pandas as pd  # (here: the --set processes, which fork, stay as small as a worker's parent)

    rows = []
    for which in SETS:
        child = subprocess.run([sys.executable, "-m", "evaluation.bench.fixed_cost", "--set", which,
                                "--forks", str(args.forks)], capture_output=True, text=True, check=True)
        seconds = json.loads(child.stdout.splitlines()[-1])
        rows.append((which, 1000 * statistics.median(seconds), 1000 * min(seconds), len(seconds)))
    frame = pd.DataFrame(rows, columns=["programs", "median_ms", "min_ms", "samples"]).round(1)
    write_table(frame, args.out / "fixed.tsv", f"grounding a one-line file, CPU ms per forked worker ({args.out}/fixed.tsv):")
    return 0


if __name__ == "__main__":
    sys.exit(main())
