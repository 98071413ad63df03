"""Build the modern corpus: model source files of recent transformers, timm and diffusers.

Each corpus comes from a pinned wheel, fetched with `pip download --no-deps` and read straight
out of the zip (never installed, never imported), so the same wheels always give the same
bytes. Files keep their path inside the wheel (`<dest>/<corpus>/transformers/models/...`),
which keeps relative imports resolvable. `evaluation/modern/MANIFEST.tsv` (committed)
records corpus, path and sha256; when it exists every extracted file must match it.

`--sample` also draws the seeded sample of files to read by hand
(`evaluation/modern/sample.tsv`, committed; when it exists the draw must give it again).

Run as `python -m evaluation.zoo_modern [--dest modern_models] [--sample]` (`make zoo-modern`).

A wheel's model files are taken without its package's `__init__.py` files (transformers'), so
each corpus folder is the root files are named from (`adopter --module-root <dest>/<corpus>`:
`transformers/models/llama/modeling_llama.py` is `transformers.models.llama.modeling_llama`);
`corpus_root` finds it for a file, `corpus_modules` names files for `adopter.api` calls.
"""

from __future__ import annotations

import argparse
import ast
import csv
import hashlib
import random
import re
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path, PurePosixPath
from typing import Callable, NamedTuple

from adopter.api.options import ModuleNames
from adopter.support.atomic import atomic_write_text

# The sample is drawn from a fixed seed, chosen before the tool ran on the corpus, so that the
# files a ground truth is written for are blind to what the tool finds; the sizes and the
# line limit keep every sampled file small enough to be read whole.
SAMPLE_SEED = 20261124
SAMPLE_SIZES = {"transformers-5.23.0": 30, "timm-1.0.31": 18, "diffusers-0.42.1": 18}
SAMPLE_MAX_LINES = 2500
MODULE_BASES = {"nn.Module", "torch.nn.Module", "Module"}  # matched as written in the source

RECORDS = Path(__file__).resolve().parent / "modern"
MANIFEST_NAME = "MANIFEST.tsv"
SAMPLE_NAME = "sample.tsv"
CORPUS_FOLDER = re.compile(r"[a-z_-]+-\d+(\.\d+)*")  # `<package>-<version>`, as under modern_models/


def corpus_root(path: Path) -> Path | None:
    """The corpus folder holding `path` (or a copy of a corpus's files laid out the same way)."""
    return next((folder for folder in Path(path).absolute().parents if CORPUS_FOLDER.fullmatch(folder.name)), None)


def corpus_modules(files) -> ModuleNames:
    """Each file named by its path in its corpus, for `adopter.api` calls."""
    return ModuleNames(roots=tuple(sorted({root for f in files if (root := corpus_root(f)) is not None})))


def module_root_options(files) -> list[str]:
    """`--module-root` options for the corpora of `files`, as an `adopter` command takes them."""
    return [option for root in corpus_modules(files).roots for option in ("--module-root", str(root))]


def is_transformers_model(path: PurePosixPath) -> bool:
    return (path.parts[:2] == ("transformers", "models") and path.match("modeling_*.py")
            and not path.name.startswith(("modeling_tf_", "modeling_flax_")))


# The package's own `__init__.py` comes along: with it the files' module names start at the
# package (`diffusers.models.activations`), as Python imports them, so a name a rule spells in
# full (`diffusers.models.activations.get_activation`) is the one a relative import resolves to.
def is_timm_model(path: PurePosixPath) -> bool:
    return (path.parts[:2] in {("timm", "models"), ("timm", "layers")} and path.suffix == ".py") \
        or str(path) == "timm/__init__.py"


def is_diffusers_model(path: PurePosixPath) -> bool:
    return (path.parts[:2] == ("diffusers", "models") and path.suffix == ".py") or str(path) == "diffusers/__init__.py"


class Corpus(NamedTuple):
    package: str
    version: str
    wanted: Callable[[PurePosixPath], bool]

    @property
    def name(self) -> str:
        return f"{self.package}-{self.version}"


CORPORA = (
    Corpus("transformers", "5.23.0", is_transformers_model),
    Corpus("timm", "1.0.31", is_timm_model),
    Corpus("diffusers", "0.42.1", is_diffusers_model),
    Corpus("transformers", "4.46.3", is_transformers_model),  # older: a few acceptance figures only
)


def download_wheel(package: str, version: str, into: Path) -> Path:
    subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps",
                    f"{package}=={version}", "-d", str(into)], check=True)
    # a wheel's file name spells the project with underscores (`x_transformers-2.31.10-...`)
    (wheel,) = into.glob(f"{re.sub(r'[-_.]+', '_', package)}-{version}-*.whl")
    return wheel


def read_sources(wheel: Path, wanted: Callable[[PurePosixPath], bool]) -> dict[str, bytes]:
    """The wanted files of a wheel, by their path inside it."""
    with zipfile.ZipFile(wheel) as archive:
        return {name: archive.read(name) for name in sorted(archive.namelist())
                if not name.endswith("/") and wanted(PurePosixPath(name))}


def load_manifest(path: Path) -> dict[tuple[str, str], str]:
    if not path.exists():
        return {}
    with path.open(newline="") as handle:
        return {(r["corpus"], r["path"]): r["sha256"] for r in csv.DictReader(handle, delimiter="\t")}


def manifest_problems(corpus: str, sources: dict[str, bytes], expected: dict[tuple[str, str], str]) -> list[str]:
    """One line per file of `corpus` that differs from the manifest, is new, or is missing."""
    problems = []
    for path, data in sources.items():
        digest = hashlib.sha256(data).hexdigest()
        if expected.get((corpus, path)) != digest:
            problems.append(f"{corpus}/{path}: sha256 {digest} does not match {MANIFEST_NAME} "
                            f"({expected.get((corpus, path), 'not listed')})")
    problems += [f"{c}/{p}: listed in {MANIFEST_NAME}, not in the wheel"
                 for c, p in sorted(expected) if c == corpus and p not in sources]
    return problems


def write_sources(dest: Path, sources: dict[str, bytes]) -> None:
    for path, data in sources.items():
        target = dest / path
        if not target.exists() or target.read_bytes() != data:
            atomic_write_text(target, data.decode("utf-8"))


def tsv_text(header: str, rows: list[tuple]) -> str:
    return "\n".join([header] + ["\t".join(map(str, row)) for row in rows]) + "\n"


def build_corpora(dest: Path, manifest: Path, corpora=CORPORA) -> int:
    """Extract every corpus into `dest`, checked against (or recorded in) `manifest`."""
    expected = load_manifest(manifest)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for corpus in corpora:
            into = Path(tmp) / corpus.name
            into.mkdir()
            sources = read_sources(download_wheel(corpus.package, corpus.version, into), corpus.wanted)
            problems = manifest_problems(corpus.name, sources, expected) if expected else []
            if problems:
                print("\n".join(problems), file=sys.stderr)
                return 1
            write_sources(dest / corpus.name, sources)
            rows += [(corpus.name, path, hashlib.sha256(data).hexdigest()) for path, data in sources.items()]
            megabytes = sum(map(len, sources.values())) / 1e6
            print(f"{corpus.name}: {len(sources)} files, {megabytes:.1f} MB in {dest / corpus.name}/")
    if not expected:
        atomic_write_text(manifest, tsv_text("corpus\tpath\tsha256", sorted(rows)))
    return 0


def base_names(tree: ast.AST) -> set[str]:
    """The base classes of every class in a module, as written."""
    return {ast.unparse(base) for node in ast.walk(tree) if isinstance(node, ast.ClassDef) for base in node.bases}


def defines_model(source: str) -> bool:
    """Some class derives, by name, from a torch module or a pretrained-model base."""
    for base in base_names(ast.parse(source)):
        last = base.rsplit(".", 1)[-1]
        if base in MODULE_BASES or last.endswith("PreTrainedModel") or last == "ModelMixin":
            return True
    return False


def eligible_files(corpus_dir: Path, paths: list[str]) -> list[tuple[str, int]]:
    """(path, lines) of the files that define a model and can be read whole, sorted."""
    eligible = []
    for path in sorted(paths):
        source = (corpus_dir / path).read_text(encoding="utf-8")
        lines = len(source.splitlines())
        if lines <= SAMPLE_MAX_LINES and defines_model(source):
            eligible.append((path, lines))
    return eligible


def draw_sample(eligible: list[tuple[str, int]], size: int, seed: int = SAMPLE_SEED) -> list[tuple[str, int]]:
    return sorted(random.Random(seed).sample(sorted(eligible), size))


def write_sample(dest: Path, manifest: Path, sample_tsv: Path) -> int:
    """Draw each corpus's sample from its manifest files; record it, or check it equals the committed one."""
    listed = load_manifest(manifest)
    rows = [(corpus, path, lines) for corpus, size in SAMPLE_SIZES.items()
            for path, lines in draw_sample(eligible_files(dest / corpus, [p for c, p in listed if c == corpus]), size)]
    text = tsv_text("corpus\tpath\tlines", rows)
    if sample_tsv.exists() and sample_tsv.read_text() != text:
        print(f"{sample_tsv}: the seeded draw gives a different sample than the committed one", file=sys.stderr)
        return 1
    atomic_write_text(sample_tsv, text)
    print(f"sample: {len(rows)} files ({', '.join(f'{c} {n}' for c, n in SAMPLE_SIZES.items())}) in {sample_tsv}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dest", type=Path, default=Path("modern_models"))
    parser.add_argument("--records", type=Path, default=RECORDS, help="folder of MANIFEST.tsv and sample.tsv")
    parser.add_argument("--sample", action="store_true", help="also draw the seeded sample")
    args = parser.parse_args(argv)
    status = build_corpora(args.dest, args.records / MANIFEST_NAME)
    if status == 0 and args.sample:
        status = write_sample(args.dest, args.records / MANIFEST_NAME, args.records / SAMPLE_NAME)
    return status


if __name__ == "__main__":
    sys.exit(main())
