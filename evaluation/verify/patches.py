"""`make verify`: run every patched zoo file against its original (harness.py) and say, per
rule, how many patches are verified by execution.

Reads `build/patches/<set>/patches.tsv` and `build/patched/<set>/` from `make patch`.
Each file runs its default class (and EXTRA_RUNS) in eval mode and in training mode with
dropout off; then, for patches whose added lines have not run yet, the model classes of
the file that may reach them (coverage.py). Each patch is
  verified          every run's outputs and gradients are allclose and every line the
                    patch added ran in some run
  failed            a run of its file differs, raises, or the state_dict does not load strictly
  not_exercised     outputs equal, but some line the patch added never ran in the tiny models built
  not_instantiable  no class of the file can be built or run here (the reason says why)
Writes build/verify/<set>.tsv (per patch) and build/verify/summary.tsv (per rule, a
`total` row summing the rules, and `all_rules` for the files patched with every rule at once).
With `--modern transformers-5.23.0` (`make verify-modern`, in .venv-verify5) the same for the
patched modern sample of `make patch-modern`, under build/verify-modern/.
"""

from __future__ import annotations

import argparse
import csv
import io
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path

from adopter.records import MODULE_LEVEL
from adopter.support.atomic import atomic_write_text
from evaluation.verify import coverage, harness

ROOT = Path(__file__).resolve().parents[2]
SUMMARY_COLUMNS = ["rule", "patches", "verified", "failed", "not_instantiable", "not_exercised"]
# Runs besides each model's default class, for what the automatic choices (other classes
# of the file, config values read by the enclosing `if`s) cannot find: config values
# that build the patched layers at all, or that a helper method's caller tests.
_DPT_HEAD = "dpt:DPTForDepthEstimation@num_hidden_layers=4&backbone_out_indices=[0,1,2,3]"
_XVECTOR = "@tdnn_kernel=[1,1,1,1,1]&use_weighted_layer_sum=True"  # tiny audio is too short for kernel 3
_BLOCK_SPARSE = "@attention_type='block_sparse'&block_size=2&num_random_blocks=1"
# DETR-style segmentation heads: a torch backbone with four stages, d_model + heads divisible by 8
_SEGMENTATION = ("@use_timm_backbone=False&encoder_attention_heads=8&decoder_attention_heads=8"
                 "&backbone_config.depths=[1,1,1,1]&backbone_config.hidden_sizes=[16,16,16,16]"
                 "&backbone_config.stage_names=['stem','stage1','stage2','stage3','stage4']"
                 "&backbone_config._out_features=['stage1','stage2','stage3','stage4']"
                 "&backbone_config._out_indices=[1,2,3,4]")
EXTRA_RUNS = {
    "dpt": [_DPT_HEAD, _DPT_HEAD + "&use_batch_norm_in_fusion_residual=True"],  # both sides of `if self.use_batch_norm`
    # the rules' attention classes run the original code when asked for attention weights
    "bert": ["bert:BertForMaskedLM", "bert@output_attentions=True"],
    "gpt2": ["gpt2@add_cross_attention=True", "gpt2@reorder_and_upcast_attn=True", "gpt2@output_attentions=True"],
    "t5": ["t5@output_attentions=True"],
    "decision_transformer": ["decision_transformer@reorder_and_upcast_attn=True"],
    "beit": ["beit:BeitForSemanticSegmentation@num_hidden_layers=4&out_indices=[0,1,2,3]"],
    "swiftformer": ["swiftformer@depths=[2,2,2,2]"],  # a stage of depth 1 has no conv encoder
    "big_bird": ["big_bird" + _BLOCK_SPARSE],
    "bigbird_pegasus": ["bigbird_pegasus" + _BLOCK_SPARSE],
    "nystromformer": ["nystromformer@segment_means_seq_len=16&num_landmarks=4"],
    "longt5": ["longt5@encoder_attention_type='transient-global'"],
    "falcon": ["falcon@alibi=True"],
    "detr": ["detr:DetrForSegmentation" + _SEGMENTATION],
    "conditional_detr": ["conditional_detr:ConditionalDetrForSegmentation" + _SEGMENTATION],
    **{m: [f"{m}:{c}ForXVector" + _XVECTOR] for m, c in (("wav2vec2", "Wav2Vec2"), ("wavlm", "WavLM"),
       ("unispeech_sat", "UniSpeechSat"), ("wav2vec2_conformer", "Wav2Vec2Conformer"))},
    "switch_transformers": ["switch_transformers@encoder_sparse_step=2&decoder_sparse_step=2&num_experts=4"],
    "nllb_moe": ["nllb_moe@encoder_sparse_step=2&decoder_sparse_step=2&num_experts=4"],
}


# The same for the modern sample (transformers 5.23.0, `make verify-modern`); muse_glimmer: the
# vision tower its composite builds from its own file, beside the text model it runs by default.
_SEGMENTATION_5 = ("@encoder_attention_heads=8&decoder_attention_heads=8"  # the ResNet of tiny_modern, four stages out
                  "&backbone_config.depths=[1,1,1,1]&backbone_config.hidden_sizes=[16,16,16,16]"
                  "&backbone_config._out_features=['stage1','stage2','stage3','stage4']"
                  "&backbone_config._out_indices=[1,2,3,4]")
MODERN_EXTRA_RUNS = {
    "muse_glimmer": ["muse_glimmer:MuseGlimmerVisionModel"],
    "bigbird_pegasus": ["bigbird_pegasus" + _BLOCK_SPARSE],  # 16 tokens in blocks of 2: block-sparse attention
    "detr": ["detr:DetrForSegmentation" + _SEGMENTATION_5],  # the mask head's attention map
}


@dataclass
class _File:
    model: str
    original: Path
    patched: Path
    patches: list[dict]  # applied rows of patches.tsv for this file
    lines: dict[int, list[int]]  # patch index -> lines it added (coverage.assign)
    runs: list[tuple[str, harness.Result]] = field(default_factory=list)

    def missing(self) -> set[int]:
        ran = set().union(*[set(r.executed or ()) for _, r in self.runs if r.status == "verified"])
        return set().union(*self.lines.values()) - ran


def _load(name: str, patched_dir: Path, zoo: Path, patches_tsv: Path) -> list[_File]:
    rows: dict[str, list[dict]] = {}
    with patches_tsv.open() as handle:
        for row in csv.DictReader(handle, delimiter="\t"):
            if row["status"] == "applied":
                rows.setdefault(row["file"], []).append(row)
    files = []
    for file_name, patches in sorted(rows.items()):
        patched, original = patched_dir / file_name, zoo / file_name
        added = coverage.added_lines(original.read_text(), patched.read_text())
        lines = coverage.assign(added, [(p["class"], int(p["line"])) for p in patches])
        files.append(_File(Path(file_name).stem[len("modeling_"):], original.resolve(), patched.resolve(), patches, lines))
    return files


def _run(files: list[_File], labels: dict[str, list[str]], jobs: int, timeout: float) -> None:
    work, owner = [], []
    for f in files:
        harness.WATCH[str(f.patched)] = sorted(set().union(*f.lines.values()))
        for label in labels.get(f.model, []):
            work.append((label, f.original, f.patched))
            owner.append(f)
    for f, (label, _, _), result in zip(owner, work, harness.run_many(work, harness.DEFAULT_SEED, timeout, jobs)):
        f.runs.append((label, result))
        print(f"  {label:48s} {result.status:16s} {result.reason[:100]}", flush=True)


def _missing_targets(f: _File) -> set[str]:
    missing = f.missing()
    if any(r.status == "failed" for _, r in f.runs):
        return set()
    return {p["class"] for i, p in enumerate(f.patches) if missing & set(f.lines[i])}


def _missing_classes(f: _File) -> set[str]:
    """`_missing_targets` that are classes (a module-level function is no class to build)."""
    return _missing_targets(f) - {MODULE_LEVEL}


def _tried_classes(f: _File) -> set[str]:
    """Classes already built for `f`: named in a run's label, or (default runs) the class
    the harness chose, which starts its reason."""
    return {r.reason.split(":", 1)[0] for _, r in f.runs} | {l.partition(":")[2].partition("@")[0] for l, _ in f.runs}


def _other_classes(f: _File) -> list[str]:
    """Classes of the file that may reach the patched classes whose lines have not run."""
    targets = _missing_classes(f)
    if not targets:
        return []
    tried = _tried_classes(f)
    classes = coverage.covering_classes(f.patched.read_text(), targets)
    return [f"{f.model}:{c}" for c in classes if c not in tried]


def _other_branches(f: _File, limit: int = 3) -> list[str]:
    """The runs that built, again with config values that enter the `if`s around lines
    that have not run (coverage.guard_settings)."""
    if not _missing_targets(f):
        return []
    source = f.patched.read_text()
    settings: dict = {}
    for line in sorted(f.missing()):
        settings.update(coverage.guard_settings(source, line))
    if not settings:
        return []
    extra = "&".join(f"{k}={v!r}" for k, v in sorted(settings.items()))
    built = [l for l, r in f.runs if r.status == "verified" and "@" not in l]
    return [f"{label}@{extra}" for label in built[:limit]]


# transformers 5 runs attention through a registry whose default is the `sdpa` kernel: the
# file's own `eager_attention_forward` (where it computes attention by hand, and where rules
# rewrite it) runs only when the config asks for eager attention
EAGER_ATTENTION = "_attn_implementation='eager'"


def _eager_attention(f: _File) -> list[str]:
    """The runs that built, again with eager attention, when lines have not run."""
    if not _missing_targets(f):
        return []
    built = [l for l, r in f.runs if r.status == "verified" and EAGER_ATTENTION not in l]
    return [f"{label}{'&' if '@' in label else '@'}{EAGER_ATTENTION}" for label in built]


def _layers_alone(f: _File) -> list[str]:
    """Patched classes whose lines no model ran, built alone from the config (`Class(config)`)
    on random hidden states: dead code, and heads whose model needs inputs we do not build."""
    tried = _tried_classes(f)
    return [f"{f.model}:{c}" for c in sorted(_missing_classes(f)) if c not in tried]


def verify_set(name: str, patched_dir: Path, zoo: Path, patches_tsv: Path, jobs: int, timeout: float,
               extra_runs: dict[str, list[str]] | None = None, eager_attention: bool = False) -> list[dict]:
    """Per-patch rows (set file class line status reason) for one patched set; with
    `eager_attention` (transformers 5), the runs are also made with eager attention first."""
    extra_runs = EXTRA_RUNS if extra_runs is None else extra_runs
    files = _load(name, patched_dir, zoo, patches_tsv)
    print(f"{name}: {len(files)} files, default classes", flush=True)
    _run(files, {f.model: [f.model] + extra_runs.get(f.model, []) for f in files}, jobs, timeout)
    follow_ups = [("eager attention", _eager_attention)] if eager_attention else []
    for what, labels_of in (*follow_ups, ("other classes", _other_classes),
                            ("other config branches", _other_branches), ("patched layers alone", _layers_alone)):
        more = {f.model: labels_of(f) for f in files}
        if any(more.values()):
            print(f"{name}: {sum(map(len, more.values()))} runs of {what} for lines not yet run", flush=True)
            _run(files, more, jobs, timeout)
    return [row for f in files for row in _patch_rows(name, f)]


def _patch_rows(name: str, f: _File) -> list[dict]:
    failed = [(l, r) for l, r in f.runs if r.status == "failed"]
    ran = [l for l, r in f.runs if r.status == "verified"]
    missing = f.missing()
    source = f.patched.read_text()
    rows = []
    for i, patch in enumerate(f.patches):
        lines = set(f.lines[i])
        if failed:
            status, reason = "failed", "; ".join(f"{l}: {r.reason}" for l, r in failed)
        elif not ran:
            status, reason = "not_instantiable", "; ".join(f"{l}: {r.reason}" for l, r in f.runs)
        elif lines & missing and patch["class"] == MODULE_LEVEL:  # a function: called, not constructed
            status, reason = ("not_exercised",
                              f"lines {sorted(lines & missing)} (a module-level function) never ran in {', '.join(ran)}")
        elif lines & missing and not coverage.covering_classes(source, {patch["class"]}):
            status, reason = "not_exercised", f"no model class of the file constructs {patch['class']} (dead code)"
        elif lines & missing:
            status, reason = "not_exercised", f"lines {sorted(lines & missing)} never ran in {', '.join(ran)}"
        else:
            status, reason = "verified", f"its {len(lines)} added lines ran in {', '.join(ran)}; outputs and gradients equal"
        rows.append({"set": name, "file": patch["file"], "class": patch["class"], "line": patch["line"],
                     "status": status, "reason": reason})
    return rows


def summarise(name: str, rows: list[dict]) -> dict:
    counts = dict.fromkeys(SUMMARY_COLUMNS[1:], 0)
    for row in rows:
        counts["patches"] += 1
        counts[row["status"]] += 1
    return {"rule": name, **counts}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Verify the patched zoo by execution.")
    parser.add_argument("--modern", metavar="CORPUS",
                        help="the patched modern sample of CORPUS (make patch-modern; run in the venv of "
                        "its transformers, make verify5-setup): changes the defaults of the four folders "
                        "below to build/patched-modern, build/patches-modern, modern_models/CORPUS, "
                        "build/verify-modern")
    parser.add_argument("--patched", type=Path)
    parser.add_argument("--patches", type=Path)
    parser.add_argument("--zoo", type=Path, help="the originals (default hf_models)")
    parser.add_argument("--out", type=Path)
    parser.add_argument("--sets", help="comma-separated rule ids (default: every rule, then all_rules)")
    parser.add_argument("--jobs", type=int, default=max(1, os.cpu_count() or 1))
    parser.add_argument("--timeout", type=float, default=harness.DEFAULT_TIMEOUT)
    args = parser.parse_args(argv)
    suffix = "-modern" if args.modern else ""
    args.patched = args.patched or ROOT / "build" / f"patched{suffix}"
    args.patches = args.patches or ROOT / "build" / f"patches{suffix}"
    args.zoo = args.zoo or (ROOT / "modern_models" / args.modern if args.modern else ROOT / "hf_models")
    args.out = args.out or ROOT / "build" / f"verify{suffix}"
    if not args.patches.is_dir():
        print(f"no {args.patches}: run `make patch` first", file=sys.stderr)
        return 2
    names = args.sets.split(",") if args.sets else sorted(p.name for p in args.patches.iterdir()
                                                          if p.is_dir() and p.name != "all") + ["all"]
    summary = [row for row in _read_summary(args.out / "summary.tsv")  # rows of sets not re-run stay
               if row["rule"] != "total" and ("all" if row["rule"] == "all_rules" else row["rule"]) not in names]
    args.out.mkdir(parents=True, exist_ok=True)
    for name in names:
        rows = verify_set(name, args.patched / name, args.zoo, args.patches / name / "patches.tsv",
                          args.jobs, args.timeout, MODERN_EXTRA_RUNS if args.modern else EXTRA_RUNS,
                          eager_attention=bool(args.modern))
        write_rows(args.out / f"{name}.tsv", ["set", "file", "class", "line", "status", "reason"], rows)
        summary.append(summarise("all_rules" if name == "all" else name, rows))
    rules = sorted((row for row in summary if row["rule"] != "all_rules"), key=lambda row: row["rule"])
    total = {"rule": "total", **{c: sum(r[c] for r in rules) for c in SUMMARY_COLUMNS[1:]}}
    table = rules + [total] + [row for row in summary if row["rule"] == "all_rules"]
    write_rows(args.out / "summary.tsv", SUMMARY_COLUMNS, table)
    print("\t".join(SUMMARY_COLUMNS))
    for row in table:
        print("\t".join(str(row[c]) for c in SUMMARY_COLUMNS))
    return 1 if total["failed"] else 0


def _read_summary(path: Path) -> list[dict]:
    if not path.is_file():
        return []
    with path.open() as handle:
        return [{k: (v if k == "rule" else int(v)) for k, v in row.items()}
                for row in csv.DictReader(handle, delimiter="\t")]


def write_rows(path: Path, columns: list[str], rows: list[dict]) -> None:
    """`rows` as a TSV of `columns`, tabs and newlines in a value made spaces, written atomically."""
    text = io.StringIO()
    writer = csv.DictWriter(text, fieldnames=columns, delimiter="\t", lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({c: str(row[c]).replace("\t", " ").replace("\n", " ") for c in columns})
    atomic_write_text(path, text.getvalue())


if __name__ == "__main__":
    sys.exit(main())
