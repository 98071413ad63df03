"""`make bench-compile`: how compiling a rule to Datalog grows with the rule's length.

The rule is a chain of N Dropout calls, each reading the previous one's output:
  forward: torch.nn.Dropout($x0) -> $x1; torch.nn.Dropout($x1) -> $x2; ... -> $xN
For each N, `parse_rule` and `compile_rule` are timed in-process (best of --repeat), and the
compiled program's size is counted: its body literals (the chain's rules' bodies) and bytes.
Writes build/bench/compile.tsv (n, parse_s, compile_s, literals, bytes) and prints it.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from adopter.support.atomic import atomic_write_text
from adopter.rules.compiler import compile_rule
from adopter.rules.dsl import parse_rule


def chain_rule(n: int) -> str:
    """The text of a rule `chain` whose forward pattern is n Dropout calls in a row."""
    nodes = "; ".join(f"torch.nn.Dropout($x{i}) -> $x{i + 1}" for i in range(n))
    return f"rule: chain\ninit: _ => _\nforward:\n    {nodes}\n    =>\n    _\n"


def body_literals(program: str) -> int:
    """The number of body literals of a compiled program's rules (top-level `, ` splits)."""
    count = 0
    for line in program.splitlines():
        if ":-" not in line:
            continue
        body, depth = line.split(":-", 1)[1], 0
        count += 1
        for char in body:
            depth += (char == "(") - (char == ")")
            count += char == "," and depth == 0
    return count


def best_seconds(function, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        function()
        best = min(best, time.perf_counter() - start)
    return best


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="100,200,400,800", help="comma-separated chain lengths N")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--out", type=Path, default=Path("build/bench"))
    args = parser.parse_args(argv)
    rows = ["n\tparse_s\tcompile_s\tliterals\tbytes"]
    for n in (int(size) for size in args.sizes.split(",")):
        text = chain_rule(n)
        parse = best_seconds(lambda: parse_rule(text, "chain.adopt"), args.repeat)
        rule = parse_rule(text, "chain.adopt")
        compiled = best_seconds(lambda: compile_rule(rule), args.repeat)
        program = compile_rule(rule)
        rows.append(f"{n}\t{parse:.4f}\t{compiled:.4f}\t{body_literals(program)}\t{len(program.encode())}")
        print(rows[-1], flush=True)
    args.out.mkdir(parents=True, exist_ok=True)
    atomic_write_text(args.out / "compile.tsv", "\n".join(rows) + "\n")
    print(f"wrote {args.out / 'compile.tsv'}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
