"""Merge the per-rule ground-truth parts (read from the code, one rule per part) into
`paper_locations.tsv` and `deviations.tsv`. Run once after editing a part:
`python -m evaluation.groundtruth.merge_parts`."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from adopter.support.atomic import atomic_write_text

HERE = Path(__file__).resolve().parent
RULE_ORDER = ["bert_self_attention", "t5_attention", "gpt2_attention", "softmax", "dropout_layernorm",
              "bias_gelu", "conv_batchnorm", "linear_batchnorm", "fused_qkv"]


def merge() -> tuple[pd.DataFrame, pd.DataFrame]:
    parts = HERE / "parts"
    locations = pd.concat([pd.read_csv(parts / f"{r}.tsv", sep="\t", dtype=str, keep_default_na=False)
                           for r in RULE_ORDER], ignore_index=True)
    locations["line"] = locations["line"].astype(int)
    locations = locations.sort_values(["model", "rule", "line"], key=lambda c: c.map(RULE_ORDER.index)
                                      if c.name == "rule" else c, ignore_index=True)
    deviations = pd.concat([pd.read_csv(parts / f"{r}_deviations.tsv", sep="\t", dtype=str, keep_default_na=False)
                            for r in RULE_ORDER], ignore_index=True)
    return locations, deviations.sort_values(["model", "rule"], ignore_index=True)


if __name__ == "__main__":
    locations, deviations = merge()
    atomic_write_text(HERE / "paper_locations.tsv", locations.to_csv(sep="\t", index=False))
    atomic_write_text(HERE / "deviations.tsv", deviations.to_csv(sep="\t", index=False))
    print(f"{len(locations)} locations, {len(deviations)} deviations")
