"""`make bench`: speed and memory of the main path on the zoo, in one run.

Measures (medians of --repeat runs, at least 7 for the sub-second re-scans; all on the same files):
  parse       `ast.parse` of every zoo file, in-process, one core: the yardstick
  cold        `adopter facts` + `adopter scan` with an empty cache (the bar, docs/performance.md: <= 6x parse)
  warm        the same two commands again, cache filled
  scan_cold   `adopter scan --no-cache` alone
  rescan_one_changed   `adopter scan` of the whole zoo after one file changed (warm cache)
  scan_one_file        `adopter scan` of that one changed file alone (warm cache)
Writes build/bench/bench.tsv (metric, seconds, peak_mib, ratio_to_parse) and prints it.
"""

from __future__ import annotations

import argparse
import ast
import shutil
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd

from evaluation.bench.measure import median, run, write_table
from evaluation.zoo import MODULES_NAME

ADOPTER = [sys.executable, "-m", "adopter"]


def parse_seconds(files: list[Path]) -> float:
    sources = [f.read_text() for f in files]
    start = time.perf_counter()
    for source in sources:
        ast.parse(source)
    return time.perf_counter() - start


def module_map_option(folder: Path) -> list[str]:
    """`--module-map` for a zoo folder that has one (`make zoo` writes it), as `make facts match` pass it."""
    table = folder / MODULES_NAME
    return ["--module-map", str(table)] if table.is_file() else []


def main_path(zoo: Path, cache: Path, out: Path, extra: list[str] = ()) -> tuple[float, float]:
    """`adopter facts ZOO && adopter scan ZOO` (what `make facts && make match` run)."""
    env = {"ADOPTER_CACHE": str(cache)}
    extra = [*module_map_option(zoo), *extra]
    # (facts runs the bundled rules too, as make facts does, so the scan reads their matches from the cache)
    facts = run(ADOPTER + ["facts", str(zoo), "--out", str(out / "facts"), "--rules", "paper", "--rules", "modern", *extra],
                env)
    scan = run(ADOPTER + ["scan", str(zoo), "--format", "jsonl", "-o", str(out / "matches.jsonl"), *extra], env)
    if facts.returncode or scan.returncode:
        raise SystemExit(f"bench: adopter failed (facts {facts.returncode}, scan {scan.returncode})")
    return facts.seconds + scan.seconds, max(facts.peak_mib, scan.peak_mib)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--zoo", type=Path, default=Path("hf_models"), help="a folder of model files (searched recursively)")
    parser.add_argument("--out", type=Path, default=Path("build/bench"))
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    files = sorted(args.zoo.rglob("*.py"))  # what `adopter` reads of the folder: every .py below it
    rows = []
    parse = median([parse_seconds(files) for _ in range(args.repeat)])
    rows.append(("parse", parse, 0.0))
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        cold, warm = [], []
        for i in range(args.repeat):
            cache = tmp / f"cache{i}"
            cold.append(main_path(args.zoo, cache, tmp))
            warm.append(main_path(args.zoo, cache, tmp))
        rows.append(("cold (facts + scan)", median([c[0] for c in cold]), max(c[1] for c in cold)))
        rows.append(("warm (facts + scan)", median([w[0] for w in warm]), max(w[1] for w in warm)))
        scans = [run(ADOPTER + ["scan", str(args.zoo), "--no-cache", "--format", "jsonl", "-o", str(tmp / "m.jsonl"),
                                *module_map_option(args.zoo)])
                 for _ in range(args.repeat)]
        rows.append(("scan_cold (--no-cache)", median([s.seconds for s in scans]), max(s.peak_mib for s in scans)))
        # one changed file: a copy of the zoo, scanned once to fill the cache, then one file edited
        copy = tmp / "zoo"
        shutil.copytree(args.zoo, copy)
        env = {"ADOPTER_CACHE": str(tmp / "cache-edit")}
        named = module_map_option(copy)
        run(ADOPTER + ["scan", str(copy), "--format", "jsonl", "-o", str(tmp / "m.jsonl"), *named], env)
        # (the zoo's BERT, or in another corpus its first file)
        changed = copy / ("modeling_bert.py" if (copy / "modeling_bert.py").exists() else files[0].relative_to(args.zoo))
        rescans, singles = [], []
        # these runs take under a second, where this VM's noise is largest: more of them
        for i in range(max(args.repeat, 7)):
            changed.write_text(changed.read_text() + f"\n# edit {i}\n")
            rescans.append(run(ADOPTER + ["scan", str(copy), "--format", "jsonl", "-o", str(tmp / "m.jsonl"), *named], env))
            changed.write_text(changed.read_text() + f"\n# edit {i}b\n")
            singles.append(run(ADOPTER + ["scan", str(changed), "--format", "jsonl", "-o", str(tmp / "m1.jsonl"), *named],
                               env))
        rows.append(("rescan_one_changed (warm)", median([r.seconds for r in rescans]), max(r.peak_mib for r in rescans)))
        rows.append(("scan_one_file (changed)", median([r.seconds for r in singles]), max(r.peak_mib for r in singles)))
    frame = pd.DataFrame(rows, columns=["metric", "seconds", "peak_mib"])
    frame["ratio_to_parse"] = (frame["seconds"] / parse).round(2)
    frame["seconds"] = frame["seconds"].round(3)
    frame["peak_mib"] = frame["peak_mib"].round(0)
    write_table(frame, args.out / "bench.tsv", f"{len(files)} files, medians of {args.repeat} runs ({args.out}/bench.tsv):")
    return 0


if __name__ == "__main__":
    sys.exit(main())
