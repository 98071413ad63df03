"""Ablations (the paper's Table 3): the same engine with one analysis swapped out.

Each variant fills one slot of the analyses with its own part (`adopter/datalog/variants/<variant>.lp`).
Scans the zoo with every variant, scores each against the ground truth, writes
`build/eval/ablation.tsv` (`variant rule gt tp fp fn precision recall`, variant `full`
included) and returns it.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from adopter.support.atomic import atomic_write_text
from adopter.api.scan import scan
from adopter.datalog.engine import VARIANTS
from evaluation.groundtruth.merge_parts import RULE_ORDER
from evaluation.metrics import load_groundtruth, location_summary, matches_frame
from adopter.rules.registry import load_rules
from evaluation.zoo import zoo_modules

ALL_VARIANTS = ("full", *VARIANTS)


def run_ablations(zoo: Path, groundtruth: Path, out: Path, progress=None) -> pd.DataFrame:
    truth = load_groundtruth(groundtruth)
    rules = load_rules(["paper"])  # the paper's nine rules, as its tables
    files = [str(p) for p in sorted(zoo.glob("*.py"))]
    frames = []
    for variant in ALL_VARIANTS:
        result = scan(files, rules, variant=variant, progress=progress(variant) if progress else None,
                      modules=zoo_modules(files))
        summary, _ = location_summary(matches_frame(result.matches), truth, RULE_ORDER)
        summary.insert(0, "variant", variant)
        frames.append(summary)
    table = pd.concat(frames, ignore_index=True)
    atomic_write_text(out / "ablation.tsv", table.to_csv(sep="\t", index=False))
    return table


def table3(ablation: pd.DataFrame) -> pd.DataFrame:
    """Rules as rows, one precision/recall column pair per variant (the paper's shape)."""
    wide = ablation.pivot(index="rule", columns="variant", values=["precision", "recall"])
    columns = [(metric, variant) for variant in ALL_VARIANTS for metric in ("precision", "recall")]
    wide = wide[columns]
    wide.columns = [f"{variant} {metric[0].upper()}" for metric, variant in columns]
    return wide.reindex(RULE_ORDER + ["total"])
