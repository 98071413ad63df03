"""`make eval-timm`: timm 1.0.31's literal Conv2d -> BatchNorm2d sites found by `conv_batchnorm`.

The reference set (evaluation/groundtruth/timm_conv_bn/sites.tsv) was read from the code
before the analyses changed for it; a site is identified by its conv's construction line. A
site counts as found when a match of `conv_batchnorm` in its file has that line among its
`init_lines`. Scans `modern_models/timm-1.0.31/timm/models` cold, writes
build/eval-timm/{matches.jsonl,sites.tsv} (each site with `found` 0/1) and prints recall
overall and by shape.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

import pandas as pd

from adopter.support.atomic import atomic_write_text

HERE = Path(__file__).resolve().parent
SITES = HERE / "groundtruth" / "timm_conv_bn" / "sites.tsv"


def found_lines(matches: Path, root: Path) -> set[tuple[str, int]]:
    """(path below the corpus root, conv line) of every conv_batchnorm match's constructions."""
    found = set()
    for line in matches.read_text().splitlines():
        if not line.strip():
            continue
        record = json.loads(line)
        if record["rule"] != "conv_batchnorm":
            continue
        path = Path(record["file"]).resolve().relative_to(root.resolve()).as_posix()
        found |= {(path, int(init_line)) for init_line in record["init_lines"]}
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=Path("modern_models/timm-1.0.31"))
    parser.add_argument("--out", type=Path, default=Path("build/eval-timm"))
    args = parser.parse_args(argv)
    models = args.corpus / "timm" / "models"
    if not models.is_dir():
        raise SystemExit(f"{models}: error: not fetched (run `make zoo-modern`)")
    args.out.mkdir(parents=True, exist_ok=True)
    matches = args.out / "matches.jsonl"
    subprocess.run([sys.executable, "-m", "adopter", "scan", str(models), "-r", "conv_batchnorm", "--format", "jsonl",
                    "-o", str(matches), "--no-cache"], check=False)
    sites = pd.read_csv(SITES, sep="\t")
    found = found_lines(matches, args.corpus)
    sites["found"] = [int((path, line) in found) for path, line in zip(sites["file"], sites["line"])]
    atomic_write_text(args.out / "sites.tsv", sites.to_csv(sep="\t", index=False))
    by_shape = sites.groupby("shape")["found"].agg(["sum", "count"])
    print(f"timm literal Conv2d -> BatchNorm2d: {sites['found'].sum()} of {len(sites)} sites found "
          f"(recall {sites['found'].mean():.3f}); {args.out}/sites.tsv")
    for shape, row in by_shape.iterrows():
        print(f"  {shape}: {row['sum']} of {row['count']}")
    for _, site in sites[sites["found"] == 0].iterrows():
        print(f"  missed {site['file']}:{site['line']} {site['class_or_function']} ({site['shape']})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
