"""`python -m evaluation.bench.batch_ground`: what grounding k files in one clingo run costs.

Every file's run pays clingo's per-rule preparation again (`make bench-fixed`); a batch
(adopter/datalog/batch.py: the programs with a file column) pays it once, and `adopter`
batches small files. This measures the ground alone, for any k files, so the sizes it
batches can be chosen from numbers.

For k files (`--corpus`, from `--start`, in name order), CPU time of:
  single   each file grounded in a fork of a parent prepared for it, as a cold run does
  batch    the k files grounded in one fork of a parent prepared with the file-column program
           (`adopter` prepares it in each batch's fork instead, so a run pays a little more)
`--check` also compares every kept relation (the matches, the summary) file by file.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from adopter.datalog import batch
from adopter.datalog.engine import MAIN_PROGRAM, MATCH_PROGRAMS, fact_terms, ground, prepare, relations_read
from adopter.extract.sources import extract_text
from evaluation.zoo import module_of
from adopter.matches.build import REPORTED, rules_program
from adopter.matches.structures import SUMMARY_MAX_GUARDS, forward_structure_parts
from adopter.rules.registry import load_rules
from evaluation.bench.measure import cpu_in_fork

KEPT = REPORTED | {"dl_node", "structure_scope", "too_many_guards"}


def _kept(control, tagged: bool) -> dict[str, list[str]]:
    """The kept atoms as text, by file index (all under "0" when not `tagged`)."""
    out: dict[str, list[str]] = {}
    for name, arity, _positive in control.symbolic_atoms.signatures:
        if name in KEPT:
            for atom in control.symbolic_atoms.by_signature(name, arity):
                arguments = atom.symbol.arguments
                file = str(arguments[0].number) if tagged else "0"
                shown = arguments[1:] if tagged else arguments
                out.setdefault(file, []).append(f"{name}({','.join(map(str, shown))})")
    return {file: sorted(atoms) for file, atoms in out.items()}


def _grounded(control, tagged: bool, check: bool) -> dict[str, list[str]] | None:
    """After a ground: its kept atoms when checking (reading them is not timed apart), else nothing."""
    return _kept(control, tagged) if check else None


def measure(files: list[Path], check: bool) -> dict:
    programs = (MAIN_PROGRAM, *MATCH_PROGRAMS)
    rules_text = rules_program(load_rules())
    parts = forward_structure_parts(SUMMARY_MAX_GUARDS)
    all_facts = [extract_text(f.read_text(), f, module_of(f))[0] for f in files]
    single_cpu, single = 0.0, {}
    for index, facts in enumerate(all_facts):
        terms = fact_terms(facts, relations_read(programs, rules_text))
        prepare(programs, rules_text)
        cpu, kept = cpu_in_fork(lambda: _grounded(ground(programs, rules_text, parts, terms), False, check))
        single_cpu += cpu
        single[str(index)] = (kept or {}).get("0", [])
    # the same programs with the file column (adopter/datalog/batch.py), prepared as a file's are
    batch_text, _, relations = batch.program(programs, rules_text)
    terms = batch.fact_terms(all_facts, relations)
    prepare((), batch_text, loading=batch.loading_rules)
    batch_cpu, kept = cpu_in_fork(lambda: _grounded(ground((), batch_text, parts, terms, loading=batch.loading_rules),
                                                 True, check))
    result = {"files": len(files), "single_ms": 1000 * single_cpu, "batch_ms": 1000 * batch_cpu,
              "ratio": batch_cpu / single_cpu}
    if check:
        result["differing_files"] = [files[int(i)].name for i in single if single[i] != (kept or {}).get(i, [])]
        result["atoms_compared"] = sum(len(atoms) for atoms in single.values())
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=Path("hf_models"))
    parser.add_argument("--start", type=int, default=0, help="index of the first file, in name order")
    parser.add_argument("-k", type=int, default=8, help="files in the batch")
    parser.add_argument("--check", action="store_true", help="also compare the kept relations file by file")
    args = parser.parse_args(argv)
    files = sorted(args.corpus.rglob("*.py"))[args.start:args.start + args.k]
    if not files:
        parser.error(f"no Python files in {args.corpus} from index {args.start}")
    print(json.dumps(measure(files, args.check)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
