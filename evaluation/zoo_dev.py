"""Build the development corpus: model code of four codebases outside Hugging Face, for the
semantic-matching work (issue 50): litgpt 0.5.13, torchtitan 0.3.0, torchvision 0.29.1 and
x-transformers 2.31.10.

As `evaluation.zoo_modern` does, each comes from a pinned wheel fetched with
`pip download --no-deps` and read out of the zip (never installed, never imported); files keep
their path in the wheel under `<dest>/<package>-<version>/`, which is the module root their
names start from; `evaluation/dev/MANIFEST.tsv` (committed) records every file's sha256 and
each extraction is checked against it. torchvision's wheel is platform-specific; its Python
sources are the same bytes on every platform.

Run as `python -m evaluation.zoo_dev [--dest dev_models]` (`make zoo-dev`).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path, PurePosixPath

from evaluation.zoo_modern import MANIFEST_NAME, Corpus, build_corpora

RECORDS = Path(__file__).resolve().parent / "dev"
LITGPT_FILES = {"litgpt/model.py", "litgpt/adapter.py", "litgpt/adapter_v2.py", "litgpt/lora.py"}


def is_litgpt_model(path: PurePosixPath) -> bool:
    return str(path) in LITGPT_FILES


def is_torchtitan_model(path: PurePosixPath) -> bool:
    return path.parts[:2] == ("torchtitan", "models") and path.suffix == ".py"


def is_torchvision_model(path: PurePosixPath) -> bool:
    return path.parts[:2] in {("torchvision", "models"), ("torchvision", "ops")} and path.suffix == ".py"


def is_x_transformers(path: PurePosixPath) -> bool:
    return path.parts[0] == "x_transformers" and path.suffix == ".py"


CORPORA = (
    Corpus("litgpt", "0.5.13", is_litgpt_model),
    Corpus("torchtitan", "0.3.0", is_torchtitan_model),
    Corpus("torchvision", "0.29.1", is_torchvision_model),
    Corpus("x-transformers", "2.31.10", is_x_transformers),
)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dest", type=Path, default=Path("dev_models"))
    args = parser.parse_args(argv)
    return build_corpora(args.dest, RECORDS / MANIFEST_NAME, CORPORA)


if __name__ == "__main__":
    sys.exit(main())
