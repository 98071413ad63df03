"""`make verify`: run every patched zoo file against its original (harness.py) and say, per
rule, how many patches are verified by execution.

Reads `build/patches/<set>/patches.tsv` and `build/patched/<set>/` from `make patch`.
A file's patch is
  verified          every run's outputs are allclose and every line the patch added ran
                    (in some run: a file may run several classes or config values, EXTRA_RUNS)
  failed            a run differs, raises, or the state_dict does not load strictly
  not_exercised     outputs equal, but some added line never ran in the tiny models built
  not_instantiable  the original cannot be built or run here (the reason says why)
Writes build/verify/<set>.tsv (per file) and build/verify/summary.tsv (per rule, a `total`
row summing the rules, and `all_rules` for the files patched with every rule at once).
"""

from __future__ import annotations

import argparse
import csv
import difflib
import io
import os
import sys
from pathlib import Path

from adopter.atomic import atomic_write_text
from evaluation.verify import harness

ROOT = Path(__file__).resolve().parents[2]
SUMMARY_COLUMNS = ["rule", "patches", "verified", "failed", "not_instantiable", "not_exercised"]
# Runs besides each model's default class: heads that hold patched classes, and config
# values that take the other side of a patched `if`.
_DPT_HEAD = "dpt:DPTForDepthEstimation@num_hidden_layers=4&backbone_out_indices=[0,1,2,3]"
EXTRA_RUNS = {
    "dpt": [_DPT_HEAD, _DPT_HEAD + "&use_batch_norm_in_fusion_residual=True"],  # both sides of `if self.use_batch_norm`
    "bert": ["bert:BertForMaskedLM"],
    "gpt2": ["gpt2@add_cross_attention=True"],
}
_SKIP = ("from ", "import ", "else:", "#")


def added_lines(original: str, patched: str) -> list[int]:
    """Lines of `patched` that the patch added (imports, `else:` and comments aside)."""
    a, b = original.splitlines(), patched.splitlines()
    lines = []
    for tag, _, _, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag in ("replace", "insert"):
            lines += [j + 1 for j in range(j1, j2) if b[j].strip() and not b[j].strip().startswith(_SKIP)]
    return lines


def verify_set(name: str, patched_dir: Path, zoo: Path, jobs: int, timeout: float) -> list[dict]:
    files = sorted(patched_dir.glob("modeling_*.py"))
    work, watched = [], {}
    for path in files:
        model = path.stem[len("modeling_"):]
        original = zoo / path.name
        watched[model] = set(added_lines(original.read_text(), path.read_text()))
        harness.WATCH[str(path.resolve())] = sorted(watched[model])
        for label in [model] + EXTRA_RUNS.get(model, []):
            work.append((label, original.resolve(), path.resolve()))
    results = harness.run_many(work, harness.DEFAULT_SEED, timeout, jobs)
    by_model: dict[str, list] = {}
    for (label, _, _), result in zip(work, results):
        by_model.setdefault(label.partition(":")[0].partition("@")[0], []).append((label, result))
    rows = []
    for model, runs in by_model.items():
        failed = [(l, r) for l, r in runs if r.status == "failed"]
        ran = [(l, r) for l, r in runs if r.status == "verified"]
        hit = set().union(*[set(r.executed or ()) for _, r in ran]) if ran else set()
        missing = sorted(watched[model] - hit)
        if failed:
            status, reason = "failed", "; ".join(f"{l}: {r.reason}" for l, r in failed)
        elif not ran:
            status, reason = "not_instantiable", "; ".join(f"{l}: {r.reason}" for l, r in runs)
        elif missing:
            status, reason = "not_exercised", f"lines {missing} never ran in {', '.join(l for l, _ in ran)}"
        else:
            status, reason = "verified", f"{len(ran)} run(s), all {len(watched[model])} added lines ran"
        rows.append({"set": name, "file": f"modeling_{model}.py", "status": status, "reason": reason})
        print(f"{name:20s} {model:28s} {status:16s} {reason[:120]}", flush=True)
    return rows


def summarise(name: str, patches_tsv: Path, rows: list[dict]) -> dict:
    status = {r["file"]: r["status"] for r in rows}
    counts = dict.fromkeys(SUMMARY_COLUMNS[1:], 0)
    with patches_tsv.open() as handle:
        for row in csv.DictReader(handle, delimiter="\t"):
            if row["status"] != "applied":
                continue
            counts["patches"] += 1
            counts[status.get(row["file"], "not_instantiable")] += 1
    return {"rule": name, **counts}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Verify the patched zoo by execution.")
    parser.add_argument("--patched", type=Path, default=ROOT / "build" / "patched")
    parser.add_argument("--patches", type=Path, default=ROOT / "build" / "patches")
    parser.add_argument("--zoo", type=Path, default=ROOT / "hf_models")
    parser.add_argument("--out", type=Path, default=ROOT / "build" / "verify")
    parser.add_argument("--sets", help="comma-separated rule ids (default: every rule, then all_rules)")
    parser.add_argument("--jobs", type=int, default=max(1, os.cpu_count() or 1))
    parser.add_argument("--timeout", type=float, default=harness.DEFAULT_TIMEOUT)
    args = parser.parse_args(argv)
    if not args.patches.is_dir():
        print(f"no {args.patches}: run `make patch` first", file=sys.stderr)
        return 2
    names = args.sets.split(",") if args.sets else sorted(p.name for p in args.patches.iterdir()
                                                          if p.is_dir() and p.name != "all") + ["all"]
    summary = []
    args.out.mkdir(parents=True, exist_ok=True)
    for name in names:
        rows = verify_set(name, args.patched / name, args.zoo, args.jobs, args.timeout)
        _write(args.out / f"{name}.tsv", ["set", "file", "status", "reason"], rows)
        summary.append(summarise("all_rules" if name == "all" else name, args.patches / name / "patches.tsv", rows))
    rules = [row for row in summary if row["rule"] != "all_rules"]
    total = {"rule": "total", **{c: sum(r[c] for r in rules) for c in SUMMARY_COLUMNS[1:]}}
    table = rules + [total] + [row for row in summary if row["rule"] == "all_rules"]
    _write(args.out / "summary.tsv", SUMMARY_COLUMNS, table)
    print("\t".join(SUMMARY_COLUMNS))
    for row in table:
        print("\t".join(str(row[c]) for c in SUMMARY_COLUMNS))
    return 1 if total["failed"] else 0


def _write(path: Path, columns: list[str], rows: list[dict]) -> None:
    text = io.StringIO()
    writer = csv.DictWriter(text, fieldnames=columns, delimiter="\t", lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({c: str(row[c]).replace("\t", " ").replace("\n", " ") for c in columns})
    atomic_write_text(path, text.getvalue())


if __name__ == "__main__":
    sys.exit(main())
