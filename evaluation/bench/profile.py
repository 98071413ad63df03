"""`make profile`: where the cold analysis of a file goes, step by step (measure first).

Steps, on a sample of zoo files (every `--every`-th), each cumulative over the last:
  parse          `ast.parse`, the yardstick of docs/performance.md
  extract        facts from source (it parses too)
  fact terms     the facts as clingo terms (text), one per relation
  then the Datalog: the same facts loaded and grounded with the programs of `main.lp`
  in include order, then the match programs, then the compiled bundled rules. Each
  row is what its step adds; the first Datalog row, `schema/facts.lp`, is clingo
  reading the facts alone.
Cost is counted in instructions with valgrind (`--instructions`, the default when
valgrind is installed: exact, so a change of a few percent shows; each step runs in its
own process under callgrind, ~1 min per step on 4 files) or else in CPU seconds of this
process (min of `--repeat`; on a shared VM a step moves by 5-10% from run to run, so
small steps can come out negative). Writes build/bench/profile.tsv (step, cost, unit,
per_file, share, ratio_to_parse) and prints it.

`--worker` counts instead what a cold run's worker pays for each file (valgrind only): the
parent loads the programs and the compiled rules once (`prepare`, as `adopter facts` does),
and each file is analysed in a fork of it, as in a run (`adopter facts`: the summary's
structures and the rules' matches in one clingo run). Only the forks' instructions count,
in five steps: parse (`ast.parse`, the yardstick), extract, fact terms, grounding (clingo
reading the facts and grounding everything), and reading the results back (the kept
relations, the matches, the summary). Writes build/bench/profile_worker.tsv.
"""

from __future__ import annotations

import argparse
import ast
import os
import re
import shutil
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pandas as pd

from adopter.matches.build import rules_program
from adopter.extract.sources import extract_text
from adopter.matches.structures import SUMMARY_MAX_GUARDS, forward_structure_parts
from adopter.datalog.engine import (DATALOG_DIR, MAIN_PROGRAM, MATCH_PROGRAMS, catalogue_facts, fact_terms, ground,
                                    relations_read)
from adopter.rules.registry import load_rules
from evaluation.bench.measure import write_table
from evaluation.zoo import module_of

STRUCTURES = forward_structure_parts(SUMMARY_MAX_GUARDS)


def datalog_steps() -> list[tuple[str, list[Path], str]]:
    """(name, programs, extra program text) for each cumulative Datalog step (with the
    catalogue's facts, which the analyses read with main.lp's programs)."""
    includes = [MAIN_PROGRAM.parent / name for name in re.findall(r'#include "([^"]+)"', MAIN_PROGRAM.read_text())]
    out, loaded = [], []
    for program in includes + list(MATCH_PROGRAMS):
        loaded = loaded + [program]
        out.append((str(program.relative_to(DATALOG_DIR)), loaded, catalogue_facts()))
    out.append(("compiled rules (all bundled)", loaded, catalogue_facts() + rules_program(load_rules())))
    return out


def step_names() -> list[str]:
    return ["start", "parse", "extract", "fact terms"] + [name for name, _, _ in datalog_steps()]


def run_step(files: list[Path], step: int, count_atoms: bool = False) -> dict[str, int]:
    """Do everything up to step `step` (an index into `step_names`) on `files`, once. With
    `count_atoms` (not when measuring), return how many atoms of each predicate the files'
    Datalog steps derived (empty before those).

    Every result is dropped at once: keeping them alive makes the garbage collector
    rescan them, which is not the work measured (`make bench` parses the same way)."""
    sources = [(f, f.read_text()) for f in files]
    atoms: dict[str, int] = {}
    if step == 1:
        for _, text in sources:
            ast.parse(text)
        return atoms
    if step < 2:
        return atoms
    steps = datalog_steps()
    relations = relations_read(steps[-1][1], steps[-1][2])  # every step loads the same facts
    for path, text in sources:
        facts = extract_text(text, path, module_of(path))[0]
        if step >= 3 and facts is not None:
            terms = fact_terms(facts, relations)
            if step >= 4:
                _, programs, extra = steps[step - 4]
                parts = STRUCTURES if any(p.name == "structures.lp" for p in programs) else []
                control = ground(programs, extra, parts, terms)
                for name, arity, _positive in control.symbolic_atoms.signatures if count_atoms else ():
                    atoms[name] = atoms.get(name, 0) + sum(1 for _ in control.symbolic_atoms.by_signature(name, arity))
    return atoms


WORKER_STEPS = ["parse", "extract", "fact terms", "ground (reading the facts, the analyses, the rules)", "reading back"]


def worker_child(files: list[Path]) -> None:
    """Under callgrind (`worker_instructions`): prepare as `adopter facts` does, then analyse each
    file in a fork, marking its steps with `getppid` (counts zeroed) and `getpgrp` (counts dumped)."""
    from adopter.datalog import engine
    from adopter.matches import pipeline
    from adopter.support.cache import ResultCache

    request = pipeline.Request.of(load_rules(), want_summary=True, want_facts=False, cache=ResultCache(None))
    engine.prepare(*pipeline._programs(request.program, True))
    terms, ground = engine.fact_terms, engine.ENGINE.ground

    def marked(step):
        def run(*args, **kwargs):
            os.getpgrp()
            return step(*args, **kwargs)
        return run

    for path in files:
        text = path.read_text()
        pid = os.fork()
        if pid == 0:
            import gc
            gc.disable()  # as a worker runs (adopter/support/forks.py)
            engine.retain_controls()
            engine.fact_terms, engine.ENGINE.ground = marked(terms), marked(ground)
            os.getppid()
            ast.parse(text)
            os.getpgrp()
            facts = extract_text(text, path, module_of(path))[0]
            real_ground = engine.ENGINE.ground

            def ground_then_mark(*args, **kwargs):
                control = real_ground(*args, **kwargs)
                os.getpgrp()
                return control
            engine.ENGINE.ground = ground_then_mark
            pipeline._solve(facts, request, True, True)
            os._exit(0)
        os.waitpid(pid, 0)


def worker_instructions(every: int, zoo: Path) -> tuple[int, list[int]]:
    """(files, instructions per WORKER_STEPS summed over the files) of `worker_child` under callgrind."""
    import tempfile
    with tempfile.TemporaryDirectory() as folder:
        out = subprocess.run(["valgrind", "--tool=callgrind", "--zero-before=getppid", "--dump-before=getpgrp",
                              f"--callgrind-out-file={folder}/cg.%p", sys.executable, "-m", "evaluation.bench.profile",
                              "--worker-child", "--every", str(every), "--zoo", str(zoo)],
                             capture_output=True, text=True, env={**os.environ, "PYTHONHASHSEED": "0"})
        if out.returncode:
            raise SystemExit(f"profile: the worker run failed under valgrind:\n{out.stderr[-2000:]}")
        parts: dict[str, dict[int, int]] = {}
        for dump in Path(folder).iterdir():
            found = re.fullmatch(r"cg\.(\d+)(?:\.(\d+))?", dump.name)
            total = re.search(r"^totals: (\d+)", dump.read_text(), re.M)
            if found and total:
                parts.setdefault(found.group(1), {})[int(found.group(2) or 0)] = int(total.group(1))
    # a fork's dumps: 1 parse, 2 extract, 3 fact terms, 4 ground, and its end (0) the reading back
    forks = [p for p in parts.values() if len(p) == 5]
    return len(forks), [sum(p[k] for p in forks) for k in (1, 2, 3, 4, 0)]


def instructions(files: list[Path], step: int, every: int, zoo: Path) -> int:
    """Instructions executed by a child process doing `run_step(files, step)`, counted by callgrind."""
    # one hash seed for every step: set and dict orders (in the rule parser, for one) move a
    # run's count by up to 7% from seed to seed, more than some steps cost
    out = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", sys.executable, "-m",
                          "evaluation.bench.profile", "--child", str(step), "--every", str(every), "--zoo", str(zoo)],
                         capture_output=True, text=True, env={**os.environ, "PYTHONHASHSEED": "0"})
    found = re.search(r"I\s+refs:\s+([\d,]+)", out.stderr)
    if out.returncode or not found:
        raise SystemExit(f"profile: step {step} failed under valgrind:\n{out.stderr[-2000:]}")
    return int(found.group(1).replace(",", ""))


def cpu_seconds(files: list[Path], step: int, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.process_time()
        run_step(files, step)
        best = min(best, time.process_time() - start)
    return best


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--zoo", type=Path, default=Path("hf_models"))
    parser.add_argument("--every", type=int, default=None,
                        help="profile every N-th zoo file (default: 50 with --instructions, i.e. 4 files; else 5, 40 files)")
    parser.add_argument("--instructions", action=argparse.BooleanOptionalAction, default=None,
                        help="count instructions with valgrind (default: when valgrind is installed)")
    parser.add_argument("--repeat", type=int, default=2, help="CPU-time runs per step (the minimum is kept)")
    parser.add_argument("--out", type=Path, default=Path("build/bench"))
    parser.add_argument("--worker", action="store_true",
                        help="count what a forked worker of a cold run pays per file (valgrind)")
    parser.add_argument("--child", type=int, default=None, help=argparse.SUPPRESS)
    parser.add_argument("--worker-child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    counting = args.instructions if args.instructions is not None else shutil.which("valgrind") is not None
    every = args.every or (50 if counting else 5)
    files = sorted(args.zoo.glob("*.py"))[::every]
    if args.child is not None:
        run_step(files, args.child)
        return 0
    if args.worker_child:
        worker_child(files)
        return 0
    if not files:
        raise SystemExit(f"profile: no .py files in {args.zoo} (run `make zoo`)")
    if args.worker:
        if shutil.which("valgrind") is None:
            raise SystemExit("profile: --worker counts instructions with valgrind, which is not installed")
        load_rules()  # (parsed into the cache here, as above)
        count, totals = worker_instructions(every, args.zoo)
        # extraction parses: its own cost is what it adds to the parse
        rows = [(WORKER_STEPS[0], totals[0] / 1e6), (WORKER_STEPS[1], (totals[1] - totals[0]) / 1e6),
                *((name, t / 1e6) for name, t in zip(WORKER_STEPS[2:], totals[2:]))]
        frame = pd.DataFrame(rows, columns=["step", "cost"])
        parse, total = frame.loc[0, "cost"], frame["cost"].iloc[1:].sum()
        frame["unit"] = "M instructions"
        frame["per_file"] = (frame["cost"] / count).round(3)
        frame["share"] = (frame["cost"] / total).round(3)
        frame.loc[0, "share"] = None
        frame["ratio_to_parse"] = (frame["cost"] / parse).round(2)
        frame["cost"] = frame["cost"].round(3)
        write_table(frame, args.out / "profile_worker.tsv",
                    f"{count} files (every {every}th zoo file), forked workers, instructions (valgrind) "
                    f"({args.out}/profile_worker.tsv); all steps but parse: {total:.4g} M instructions = {total / parse:.2f}x parse")
        return 0

    names = step_names()
    load_rules()  # parse the rules into the cache once here: else the first steps also pay lark's parsing
    if counting:
        with ThreadPoolExecutor(2) as pool:  # each child is single-threaded; the counts do not depend on load
            totals = list(pool.map(lambda step: instructions(files, step, every, args.zoo), range(len(names))))
        unit, scale = "M instructions", 1e6
    else:
        totals = [cpu_seconds(files, step, args.repeat) for step in range(len(names))]
        unit, scale = "s", 1.0
    # each step's own cost: its total minus the step it builds on (parse and extract both start from reading)
    base = {1: 0, 2: 0}
    rows = [(names[i], (totals[i] - totals[base.get(i, i - 1)]) / scale) for i in range(1, len(names))]
    frame = pd.DataFrame(rows, columns=["step", "cost"])
    frame.loc[3, "step"] = f"{frame.loc[3, 'step']} (reading the facts)"
    parse = frame.loc[0, "cost"]
    total = frame["cost"].iloc[1:].sum()  # everything a cold run does per file (extraction parses)
    frame["unit"] = unit
    frame["per_file"] = (frame["cost"] / len(files)).round(3)
    frame["share"] = (frame["cost"] / total).round(3)
    frame.loc[0, "share"] = None
    frame["ratio_to_parse"] = (frame["cost"] / parse).round(2)
    frame["cost"] = frame["cost"].round(3)
    how = "instructions (valgrind)" if counting else f"CPU seconds, min of {args.repeat}"
    write_table(frame, args.out / "profile.tsv",
                f"{len(files)} files (every {every}th zoo file), one core, {how} ({args.out}/profile.tsv); "
                f"all steps but parse: {total:.3g} {unit} = {total / parse:.1f}x parse")
    return 0


if __name__ == "__main__":
    sys.exit(main())
