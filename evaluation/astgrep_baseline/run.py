"""Structural-search baseline: one ast-grep rule per kernel (`rules/<rule>.yml`), run over
the zoo and scored against the location-level ground truth like `make eval`.

`python -m evaluation.astgrep_baseline.run [--zoo hf_models] [--out build/eval]` writes
`baseline_matches.jsonl` (one location a line: rule, file, class, line, as
`adopter scan --format jsonl`), `baseline.tsv` (`rule gt tp fp fn precision recall`,
plus `total`) and `baseline_differences.tsv` (every false positive and negative), and
prints the table. A location's line is the 1-based start line of the rule's matched
node (each rule matches its anchor node, see README.md); its class is the innermost
class around that line (`-` if none).
"""

from __future__ import annotations

import argparse
import ast
import json
import shutil
import subprocess
import sys
from functools import cache
from pathlib import Path

from adopter.support.atomic import atomic_write_text
from evaluation.evaluate import GROUNDTRUTH
from evaluation.groundtruth.merge_parts import RULE_ORDER
from evaluation.metrics import load_groundtruth, load_matches, location_summary

RULES = Path(__file__).resolve().parent / "rules"
AST_GREP_VERSION = "0.51.1"
INSTALL_HINT = f"pip install ast-grep-cli=={AST_GREP_VERSION}"


class BaselineError(Exception):
    """A problem that ends the run with a one-line message."""


def find_ast_grep() -> Path | None:
    """The ast-grep binary: next to this interpreter (a virtualenv's bin), else on PATH.
    `sg` is accepted only next to the interpreter (on PATH it may be the shadow-utils `sg`)."""
    bindir = Path(sys.executable).parent
    for name in ("ast-grep", "sg"):
        for candidate in (bindir / name, bindir / f"{name}.exe"):
            if candidate.is_file():
                return candidate
    found = shutil.which("ast-grep")
    return Path(found) if found else None


def zoo_files(zoo: Path) -> list[Path]:
    """The zoo's Python files, sorted. They are passed to ast-grep one by one, so that
    ignore files (hf_models/*.py is in .gitignore) cannot hide them."""
    if not zoo.is_dir():
        raise BaselineError(f"{zoo}: error: no zoo directory (run `make zoo`)")
    files = sorted(zoo.glob("*.py"))
    if not files:
        raise BaselineError(f"{zoo}: error: no .py files in the zoo (run `make zoo`)")
    return files


def scan_rule(binary: Path, rule_file: Path, files: list[Path]) -> list[dict]:
    """ast-grep's JSON hits of one rule file over `files`."""
    cmd = [str(binary), "scan", "--rule", str(rule_file), "--json=compact", *map(str, files)]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        detail = (proc.stderr.strip().splitlines() or ["no message"])[0]
        raise BaselineError(f"{rule_file.name}: error: ast-grep exited with {proc.returncode}: {detail}")
    return json.loads(proc.stdout or "[]")


@cache
def _class_spans(path: str) -> tuple[tuple[int, int, str], ...]:
    """(first line, last line, name) of every class in a file, by `ast`."""
    tree = ast.parse(Path(path).read_text(encoding="utf-8"), filename=path)
    return tuple((node.lineno, node.end_lineno or node.lineno, node.name)
                 for node in ast.walk(tree) if isinstance(node, ast.ClassDef))


def enclosing_class(path: str, line: int) -> str:
    """The innermost class whose body spans `line` (1-based), or `-`."""
    spans = [s for s in _class_spans(path) if s[0] <= line <= s[1]]
    return max(spans, key=lambda s: s[0])[2] if spans else "-"


def locations(rule: str, hits: list[dict]) -> list[dict]:
    """ast-grep hits of `rule` as de-duplicated locations (rule, file, class, line)."""
    seen: set[tuple] = set()
    rows = []
    for hit in hits:
        line = hit["range"]["start"]["line"] + 1  # ast-grep's JSON lines are 0-based
        row = {"rule": rule, "file": hit["file"], "class": enclosing_class(hit["file"], line), "line": line}
        key = tuple(row.values())
        if key not in seen:
            seen.add(key)
            rows.append(row)
    return rows


def run_baseline(zoo: Path, rules_dir: Path = RULES, binary: Path | None = None) -> list[dict]:
    """Every location that the rules in `rules_dir` find in `zoo`, sorted by file, line, rule."""
    binary = binary or find_ast_grep()
    if binary is None:
        raise BaselineError(f"error: ast-grep binary not found next to {sys.executable} or on PATH "
                            f"(install it with `{INSTALL_HINT}`)")
    files = zoo_files(zoo)
    rows = []
    for rule in RULE_ORDER:
        rule_file = rules_dir / f"{rule}.yml"
        if not rule_file.exists():
            raise BaselineError(f"{rule_file}: error: missing rule file")
        rows += locations(rule, scan_rule(binary, rule_file, files))
    return sorted(rows, key=lambda r: (r["file"], r["line"], RULE_ORDER.index(r["rule"])))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--zoo", type=Path, default=Path("hf_models"))
    parser.add_argument("--out", type=Path, default=Path("build/eval"))
    parser.add_argument("--groundtruth", type=Path, default=GROUNDTRUTH)
    args = parser.parse_args(argv)
    try:
        rows = run_baseline(args.zoo)
    except BaselineError as error:
        print(error, file=sys.stderr)
        return 2
    matches_file = args.out / "baseline_matches.jsonl"
    atomic_write_text(matches_file, "".join(json.dumps(r) + "\n" for r in rows))
    summary, differences = location_summary(load_matches(matches_file), load_groundtruth(args.groundtruth),
                                            RULE_ORDER)
    atomic_write_text(args.out / "baseline.tsv", summary.to_csv(sep="\t", index=False))
    atomic_write_text(args.out / "baseline_differences.tsv", differences.to_csv(sep="\t", index=False))
    print(f"ast-grep baseline ({len(rows)} locations in {matches_file}), against {args.groundtruth.name} "
          f"({args.out}/baseline.tsv):")
    print(summary.to_string(index=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
