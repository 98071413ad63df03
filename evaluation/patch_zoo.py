"""`make patch`: patch the zoo once per rule (so each patch can be verified on its own) and
once with all rules.

With `--kernels torch` the targets are the PyTorch-only kernels (adopter/rewrite/kernel_sets.py)
and the folders are build/patched-torch/ and build/patches-torch/; `--models bert,gpt2`
patches only those zoo files. With `--modern CORPUS` (`make patch-modern`) the files are the
modern sample's files of that corpus (evaluation/modern/sample.tsv, under modern_models/),
the folders build/patched-modern/ and build/patches-modern/, and each patched copy keeps its
path inside the corpus (`<set>/transformers/models/<package>/modeling_<m>.py`; patches.tsv
names files by that path). With `--dev CORPUS` (`make verify-dev`) every file of one corpus of the
development corpus (dev_models/CORPUS, make zoo-dev), named by its path in the corpus as `--module-root`
names it; the folders default to build/patched-dev/CORPUS/ and build/patches-dev/CORPUS/.
Writes, for each `<set>` (a rule id, or `all`):
  build/patched/<set>/modeling_<m>.py   patched copies of the files that changed
  build/patches/<set>/modeling_<m>.diff one unified diff per patched file
  build/patches/<set>/patches.tsv       every match: file class line rule status reason
                                        (status: applied | refused)
and prints how many matches each set applied and refused.
"""

from __future__ import annotations

import argparse
import csv
import shutil
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import pandas as pd

from adopter.api.apply import PatchTask, patch_file, unified_diff
from adopter.records import Diagnostic
from adopter.support.atomic import atomic_write_text
from adopter.api.scan import scan
from adopter.rewrite.kernel_sets import KERNEL_SETS
from adopter.rules.registry import load_rules
from adopter.extract.sources import expand_paths
from evaluation.zoo import zoo_modules
from evaluation.zoo_modern import corpus_modules

ROOT = Path(__file__).resolve().parents[1]
COLUMNS = ["file", "class", "line", "rule", "status", "reason"]


def _patch(job):
    name, task = job
    return name, patch_file(task)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--zoo", type=Path, default=ROOT / "hf_models")
    parser.add_argument("--kernels", default="paper", choices=sorted(KERNEL_SETS))
    parser.add_argument("--models", help="comma-separated zoo models (default: the whole zoo)")
    parser.add_argument("--modern", metavar="CORPUS",
                        help="patch the modern sample's files of CORPUS (e.g. transformers-5.23.0) instead of the zoo")
    parser.add_argument("--dev", metavar="CORPUS",
                        help="patch every file of the development corpus CORPUS (e.g. x-transformers-2.31.10) "
                        "under --corpora (default dev_models) instead of the zoo")
    parser.add_argument("--corpora", type=Path, default=None, help="default modern_models (--dev: dev_models)")
    parser.add_argument("--sample", type=Path, default=ROOT / "evaluation" / "modern" / "sample.tsv")
    parser.add_argument("--patched", type=Path, help="default build/patched[-<kernels>]")
    parser.add_argument("--patches", type=Path, help="default build/patches[-<kernels>]")
    parser.add_argument("--jobs", type=int, default=None)
    args = parser.parse_args(argv)
    if args.modern and args.dev:
        parser.error("--modern and --dev name different corpora: give one")
    args.corpora = args.corpora or ROOT / ("dev_models" if args.dev else "modern_models")
    suffix = "-modern" if args.modern else "" if args.kernels == "paper" else f"-{args.kernels}"
    args.patched = args.patched or (ROOT / "build" / "patched-dev" / args.dev if args.dev else ROOT / "build" / f"patched{suffix}")
    args.patches = args.patches or (ROOT / "build" / "patches-dev" / args.dev if args.dev else ROOT / "build" / f"patches{suffix}")
    start = time.perf_counter()
    rules = load_rules()
    if args.modern:
        root = args.corpora / args.modern
        with args.sample.open() as handle:
            paths = [row["path"] for row in csv.DictReader(handle, delimiter="\t") if row["corpus"] == args.modern]
        if args.models:
            paths = [p for p in paths if Path(p).stem[len("modeling_"):] in args.models.split(",")]
        targets = [str(root / p) for p in paths]
        missing = [t for t in targets if not Path(t).is_file()]
        if not paths or missing:
            print(f"no sample files of {args.modern} under {root}: {missing[:3]} (make zoo-modern)", file=sys.stderr)
            return 2

        def name_of(path: str) -> str:  # the path inside the corpus keeps the package folders
            return Path(path).resolve().relative_to(root.resolve()).as_posix()
    elif args.dev:
        root = args.corpora / args.dev
        if not root.is_dir():
            print(f"no {root} (make zoo-dev)", file=sys.stderr)
            return 2
        targets = [str(root)]

        def name_of(path: str) -> str:
            return Path(path).resolve().relative_to(root.resolve()).as_posix()
    else:
        targets = [str(args.zoo / f"modeling_{m}.py") for m in args.models.split(",")] if args.models else [str(args.zoo)]

        def name_of(path: str) -> str:
            return Path(path).name
    files = expand_paths(targets)[0]  # (the zoo's files are named as in transformers; the modern ones by their packages)
    scanned = scan(targets, rules, jobs=args.jobs, layout=True,
                   modules=corpus_modules(files) if args.modern or args.dev else zoo_modules(files))
    rule_ids = list(dict.fromkeys(rule.id for rule in rules))  # (a rule's shape files share its id: one set each)
    jobs = []
    for analysed in scanned.files:
        matches = analysed.matches or []
        for rule_id in rule_ids:
            mine = [m for m in matches if m.rule == rule_id]
            if mine:
                jobs.append((rule_id, PatchTask(analysed.path, mine, rules, args.kernels)))
        if matches:
            jobs.append(("all", PatchTask(analysed.path, matches, rules, args.kernels)))
    jobs.sort(key=lambda job: -Path(job[1].path).stat().st_size)
    for folder in (args.patched, args.patches):
        shutil.rmtree(folder, ignore_errors=True)
    rows: dict[str, list[dict]] = {}
    with ProcessPoolExecutor(max_workers=args.jobs) as pool:
        for name, patch in pool.map(_patch, jobs, chunksize=4):
            if isinstance(patch, Diagnostic):
                print(patch, file=sys.stderr)
                continue
            stem = name_of(patch.path)
            if patch.changed:
                atomic_write_text(args.patched / name / stem, patch.patched)
                atomic_write_text(args.patches / name / Path(stem).with_suffix(".diff"), unified_diff(patch))
            for match in patch.applied:
                rows.setdefault(name, []).append(dict(file=stem, **{"class": match.class_}, line=match.line,
                                                      rule=match.rule, status="applied", reason=""))
            for match, reason in patch.refused:
                rows.setdefault(name, []).append(dict(file=stem, **{"class": match.class_}, line=match.line,
                                                      rule=match.rule, status="refused", reason=reason))
    print(f"{'set':20s} applied refused")
    for name in rule_ids + ["all"]:
        frame = pd.DataFrame(rows.get(name, []), columns=COLUMNS).sort_values(["file", "line", "rule"])
        atomic_write_text(args.patches / name / "patches.tsv", frame.to_csv(sep="\t", index=False))
        counts = frame["status"].value_counts()
        print(f"{name:20s} {counts.get('applied', 0):7d} {counts.get('refused', 0):7d}")
    print(f"{len(jobs)} file patches in {time.perf_counter() - start:.1f} s; {args.patched}, {args.patches}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
