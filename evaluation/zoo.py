"""Build the model zoo: the 199 `modeling_<name>.py` files the paper evaluated.

The files come from pinned transformers wheels (4.34.0; `owlv2` from 4.35.0), fetched
with pip and read straight out of the wheel, so the same input always gives the same
bytes. `hf_models/MANIFEST.tsv` (committed) records model, version and sha256; when it
exists, every extracted file must match it, and a mismatch is an error.

Run as `python -m evaluation.zoo [--dest hf_models]` (what `make zoo` does).

The zoo's files lie in one folder, outside the package they come from; each is analysed as
the module it is in transformers (`modeling_bert.py` is `transformers.models.bert.modeling_bert`),
so that its relative imports (`from ...activations import ACT2FN`) resolve as they do there.
`make zoo` writes those names to `hf_models/MODULES.tsv`, which `adopter --module-map` reads;
Python callers use `zoo_modules`.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

from adopter.api.options import ModuleNames
from adopter.support.atomic import atomic_write_text
from evaluation.groundtruth import PAPER_COUNTS

MAIN_VERSION = "4.34.0"
# Models the paper used that 4.34.0 does not ship, with the release that first has them.
LATER_MODELS = {"owlv2": "4.35.0"}
MANIFEST_NAME = "MANIFEST.tsv"
MODULES_NAME = "MODULES.tsv"


def zoo_module_name(path: Path | str) -> str:
    """The module a zoo file (or a copy of one, under the same name) is in transformers."""
    stem = Path(path).stem
    return f"transformers.models.{stem.removeprefix('modeling_')}.{stem}"


def zoo_modules(files) -> ModuleNames:
    """The module names of zoo files (or copies), for `adopter.api` calls."""
    return ModuleNames(names=tuple((str(Path(f).absolute()), zoo_module_name(f)) for f in files))


def module_of(path: Path) -> str:
    """The module a file is analysed as: a zoo file's (a folder with the zoo's manifest), else its package's."""
    from adopter.extract.sources import module_name

    return zoo_module_name(path) if (Path(path).parent / MANIFEST_NAME).is_file() else module_name(Path(path))


def module_map(models: list[str]) -> str:
    """`MODULES.tsv`: each zoo file's module name (`adopter ... --module-map`)."""
    return "file\tmodule\n" + "".join(f"modeling_{m}.py\t{zoo_module_name(f'modeling_{m}.py')}\n" for m in models)


def paper_models(counts_tsv: Path) -> list[str]:
    """The model names of the paper's ground-truth table, in its order."""
    with counts_tsv.open(newline="") as handle:
        return [row["model"] for row in csv.DictReader(handle, delimiter="\t")]


def download_wheel(version: str, into: Path) -> Path:
    subprocess.run(
        [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps",
         f"transformers=={version}", "-d", str(into)],
        check=True,
    )
    return into / f"transformers-{version}-py3-none-any.whl"


def read_model_file(wheel: zipfile.ZipFile, model: str) -> bytes:
    return wheel.read(f"transformers/models/{model}/modeling_{model}.py")


def load_manifest(path: Path) -> dict[str, tuple[str, str]]:
    if not path.exists():
        return {}
    with path.open(newline="") as handle:
        return {r["model"]: (r["version"], r["sha256"]) for r in csv.DictReader(handle, delimiter="\t")}


def build_zoo(dest: Path, models: list[str]) -> list[tuple[str, str, str]]:
    """Extract every model file into `dest`; return manifest rows (model, version, sha256)."""
    versions = {m: LATER_MODELS.get(m, MAIN_VERSION) for m in models}
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        wheels = {v: zipfile.ZipFile(download_wheel(v, Path(tmp))) for v in sorted(set(versions.values()))}
        for model in models:
            data = read_model_file(wheels[versions[model]], model)
            digest = hashlib.sha256(data).hexdigest()
            target = dest / f"modeling_{model}.py"
            if not target.exists() or target.read_bytes() != data:
                atomic_write_text(target, data.decode("utf-8"))
            rows.append((model, versions[model], digest))
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dest", type=Path, default=Path("hf_models"))
    parser.add_argument("--counts", type=Path, default=PAPER_COUNTS)
    args = parser.parse_args(argv)
    args.dest.mkdir(parents=True, exist_ok=True)
    manifest_path = args.dest / MANIFEST_NAME
    expected = load_manifest(manifest_path)
    models = sorted(expected) if expected else paper_models(args.counts)
    rows = build_zoo(args.dest, models)
    mismatches = [(m, v, h) for m, v, h in rows if m in expected and expected[m] != (v, h)]
    for model, version, digest in mismatches:
        print(f"{args.dest}/modeling_{model}.py: sha256 {digest} ({version}) does not match "
              f"{MANIFEST_NAME} {expected[model][1]} ({expected[model][0]})", file=sys.stderr)
    if mismatches:
        return 1
    if not expected:
        lines = ["model\tversion\tsha256"] + ["\t".join(r) for r in rows]
        atomic_write_text(manifest_path, "\n".join(lines) + "\n")
    atomic_write_text(args.dest / MODULES_NAME, module_map(models))
    print(f"zoo: {len(rows)} model files in {args.dest}/ match {MANIFEST_NAME}; module names in {MODULES_NAME}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
