"""Scale curve (`make bench-scale`): cold scan time and peak memory for growing corpora,
to show cost grows linearly with size. Corpora: the first 1, 10 and 50 zoo files, the
whole zoo (199), every PyTorch modeling file of transformers 4.57.1 (fetched with pip,
pinned), and both together. Writes build/bench/scale.tsv and build/bench/scale.png."""

from __future__ import annotations

import argparse
import ast
import re
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

from adopter.support.atomic import atomic_write_text  # noqa: E402
from evaluation.bench.measure import run  # noqa: E402

LARGER = "4.57.1"
ADOPTER = [sys.executable, "-m", "adopter"]


def larger_corpus(into: Path) -> list[Path]:
    """Every PyTorch `modeling_*.py` of transformers LARGER (no TF/Flax), extracted under `into`."""
    subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", f"transformers=={LARGER}",
                    "-d", str(into)], check=True)
    wheel = zipfile.ZipFile(into / f"transformers-{LARGER}-py3-none-any.whl")
    files = []
    for name in wheel.namelist():
        if re.fullmatch(r"transformers/models/[^/]+/modeling_[^/]+\.py", name) and not re.search(r"modeling_(tf|flax)_", name):
            target = into / "corpus" / name.split("/")[2] / name.split("/")[3]
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(wheel.read(name))
            files.append(target)
    return sorted(files)


def point(label: str, files: list[Path], work: Path) -> tuple:
    folder = work / label
    folder.mkdir()
    for i, f in enumerate(files):
        shutil.copy(f, folder / f"{i:04d}_{f.name}")
    sources = [f.read_text() for f in files]
    start = time.perf_counter()
    for source in sources:
        ast.parse(source)
    parse = time.perf_counter() - start
    scanned = run(ADOPTER + ["scan", str(folder), "--no-cache", "--format", "jsonl", "-o", str(work / f"{label}.jsonl")])
    megabytes = sum(f.stat().st_size for f in files) / 1e6
    return label, len(files), round(megabytes, 2), round(parse, 3), round(scanned.seconds, 2), round(scanned.peak_mib)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--zoo", type=Path, default=Path("hf_models"))
    parser.add_argument("--out", type=Path, default=Path("build/bench"))
    args = parser.parse_args(argv)
    zoo = sorted(args.zoo.glob("*.py"))
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        larger = larger_corpus(work / "wheel")
        corpora = [("zoo_1", zoo[:1]), ("zoo_10", zoo[:10]), ("zoo_50", zoo[:50]), ("zoo_199", zoo),
                   (f"transformers_{LARGER}", larger), ("both", zoo + larger)]
        rows = [point(label, files, work) for label, files in corpora]
    frame = pd.DataFrame(rows, columns=["corpus", "files", "megabytes", "parse_seconds", "scan_seconds", "peak_mib"])
    frame["seconds_per_mb"] = (frame["scan_seconds"] / frame["megabytes"]).round(2)
    atomic_write_text(args.out / "scale.tsv", frame.to_csv(sep="\t", index=False))
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4))
    left.plot(frame["megabytes"], frame["scan_seconds"], "o-")
    left.set_xlabel("corpus size (MB of source)")
    left.set_ylabel("cold scan, all rules (s)")
    right.plot(frame["megabytes"], frame["peak_mib"], "o-", color="tab:red")
    right.set_xlabel("corpus size (MB of source)")
    right.set_ylabel("peak memory of the process tree (MiB)")
    fig.suptitle("Scale: adopter scan --no-cache on 2 cores")
    plt.tight_layout()
    plt.savefig(args.out / "scale.png", dpi=120)
    print(frame.to_string(index=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
