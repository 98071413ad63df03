"""`make bench-bigfile`: cost per MB of one large file, next to the zoo's (the bar: a
50,000-line file within 2x the zoo's cost per MB and under 1 GiB).

For every shape of evaluation/bench/big_file.py and size (lines), one generated file is
analysed cold and alone, as a user would: `adopter scan FILE --no-cache -j 1` and `adopter
facts FILE --no-cache -j 1`, with the CLI's default per-file limits (a file over them is
reported as stopped). The zoo is scanned and `facts`-ed cold the same way (all cores).
Costs are CPU seconds (user + system, the command and its children): wall time on a shared
2-core VM moves by 2x with the neighbours' load, and the zoo runs in parallel. Peak memory
is the largest resident size of the command's process tree (sampled every 20 ms).
Writes build/bench/bigfile.tsv and prints it.
"""

from __future__ import annotations

import argparse
import resource
import sys
import tempfile
from pathlib import Path

import pandas as pd

from evaluation.bench.big_file import SHAPES, build
from evaluation.bench.measure import run, write_table

ADOPTER = [sys.executable, "-m", "adopter"]


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def measure(command: str, target: Path, work: Path, jobs: list[str]) -> dict:
    """One cold run of `adopter scan` or `adopter facts` on `target`."""
    out = ["--format", "jsonl", "-o", str(work / "matches.jsonl")] if command == "scan" else ["--out", str(work / "facts")]
    before = _children_cpu()
    result = run(ADOPTER + [command, str(target), "--no-cache", *jobs, *out])
    return {"command": command, "status": "ok" if result.returncode == 0 else f"exit {result.returncode}",
            "wall_s": round(result.seconds, 2), "cpu_s": round(_children_cpu() - before, 2),
            "peak_mib": round(result.peak_mib)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--zoo", type=Path, default=Path("hf_models"))
    parser.add_argument("--out", type=Path, default=Path("build/bench"))
    parser.add_argument("--shapes", default=",".join(SHAPES))
    parser.add_argument("--sizes", default="5000,10000,25000,50000", help="lines, comma-separated")
    parser.add_argument("--commands", default="scan,facts")
    args = parser.parse_args(argv)
    commands = args.commands.split(",")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        zoo = sorted(args.zoo.glob("*.py"))
        zoo_mb = sum(f.stat().st_size for f in zoo) / 1e6
        zoo_lines = sum(f.read_text().count("\n") for f in zoo)
        for command in commands:
            rows.append({"shape": "zoo", "lines": zoo_lines, "megabytes": round(zoo_mb, 2),
                         **measure(command, args.zoo, work, [])})
            print(rows[-1], flush=True)
        for shape in args.shapes.split(","):
            for lines in map(int, args.sizes.split(",")):
                text = build(shape, lines, args.zoo)
                # a zoo-like name: relative imports resolve as in the zoo's files
                target = work / f"modeling_big_{shape}_{lines}.py"
                target.write_text(text)
                for command in commands:
                    rows.append({"shape": shape, "lines": text.count("\n"), "megabytes": round(len(text.encode()) / 1e6, 2),
                                 **measure(command, target, work, ["-j", "1"])})
                    print(rows[-1], flush=True)
    frame = pd.DataFrame(rows)
    frame["cpu_s_per_mb"] = (frame["cpu_s"] / frame["megabytes"]).round(2)
    zoo_per_mb = frame[frame["shape"] == "zoo"].set_index("command")["cpu_s_per_mb"]
    frame["x_zoo_per_mb"] = (frame["cpu_s_per_mb"] / frame["command"].map(zoo_per_mb)).round(2)
    write_table(frame, args.out / "bigfile.tsv", f"({args.out}/bigfile.tsv)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
