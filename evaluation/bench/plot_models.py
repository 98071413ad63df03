"""Plot `make bench-models` / `make bench-gpu` ratios: training speed-up, peak memory and
inference latency of each variant against vanilla, one group of bars per model.

Runs in the main venv (matplotlib), on the `*_summary.tsv` the benchmark wrote:
`python -m evaluation.bench.plot_models build/bench/models_summary.tsv` -> `models_summary.png`.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # files only, no display
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

PANELS = [("train_speedup", "training throughput (x vanilla)"), ("train_mem_ratio", "peak memory (x vanilla)"),
          ("infer_latency_ratio", "inference latency (x vanilla)")]


def plot(summary: pd.DataFrame, title: str, out: Path) -> None:
    frame = summary[summary["variant"] != "vanilla"]
    fig, axes = plt.subplots(len(PANELS), 1, figsize=(12, 10), sharex=True)
    for axis, (column, label) in zip(axes, PANELS):
        table = frame.pivot(index="model", columns="variant", values=column)
        table.plot.bar(ax=axis, width=0.85, legend=axis is axes[0], colormap="tab20")
        axis.axhline(1.0, color="black", linewidth=0.8)
        axis.set_ylabel(label)
    axes[0].legend(fontsize=7, ncol=4)
    axes[0].set_title(title)
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=110)
    plt.close(fig)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("summary", type=Path)
    args = parser.parse_args(argv)
    if not args.summary.is_file():
        print(f"{args.summary}: error: no benchmark summary (run `make bench-models` or `make bench-gpu`)",
              file=sys.stderr)
        return 2
    out = args.summary.with_suffix(".png")
    plot(pd.read_csv(args.summary, sep="\t"), args.summary.stem, out)
    print(f"plot in {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
