"""Analysis time per (model, rule), the paper's Table 4: each rule is matched alone on
each zoo file (facts extracted once per file, then one clingo run per rule: core + that
rule), two files at a time on this 2-core machine. Raw rows go to
`build/eval/timing.tsv` (`model rule seconds`), statistics to `timing_summary.tsv`."""

from __future__ import annotations

import os
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import pandas as pd

from adopter.support.atomic import atomic_write_text
from adopter.matches.build import scan_facts
from adopter.extract.sources import facts_of_file
from evaluation.metrics import model_of
from evaluation.zoo import module_of
from adopter.rules.registry import load_rules


def time_file(path: Path) -> list[tuple[str, str, float, int]]:
    start = time.perf_counter()
    facts, _ = facts_of_file(path, module_of(path))
    extract = time.perf_counter() - start
    rows = []
    for rule in load_rules(["paper"]):  # the paper's nine rules, as its Table 4
        start = time.perf_counter()
        scan_facts(facts, [rule])
        rows.append((model_of(str(path)), rule.id, round(extract + time.perf_counter() - start, 4),
                     path.stat().st_size))
    return rows


def run_timing(zoo: Path, out: Path) -> tuple[pd.DataFrame, pd.DataFrame]:
    files = sorted(zoo.glob("*.py"))
    with ProcessPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        rows = [row for rows in pool.map(time_file, files) for row in rows]
    raw = pd.DataFrame(rows, columns=["model", "rule", "seconds", "bytes"])
    atomic_write_text(out / "timing.tsv", raw[["model", "rule", "seconds"]].to_csv(sep="\t", index=False))
    stats = raw.groupby("rule")["seconds"].agg(["max", "min", "mean", "median", "std"])
    stats.loc["all"] = raw["seconds"].agg(["max", "min", "mean", "median", "std"])
    stats = stats.round(3).reset_index()
    atomic_write_text(out / "timing_summary.tsv", stats.to_csv(sep="\t", index=False))
    return raw, stats


if __name__ == "__main__":
    raw, stats = run_timing(Path("hf_models"), Path("build/eval"))
    print(stats.to_string(index=False))
