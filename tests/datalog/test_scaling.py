"""Per-file cost grows linearly with a method's length: every relation of the analyses,
counted for a long method and for one twice as long (counts, never time: timing is
`make bench-bigfile`'s)."""

from adopter.matches import pipeline
from adopter.matches.build import rules_program
from adopter.matches.structures import SUMMARY_MAX_GUARDS, forward_structure_parts
from adopter.datalog.engine import solve
from adopter.extract.python_facts import extract_source
from adopter.rules.registry import load_rules


def _long_forward(blocks: int) -> str:
    """A forward of `blocks` unrolled steps, each with its own temporary and an early exit,
    reading parameters that no statement reassigns."""
    params = ", ".join(f"p{k}=None" for k in range(10))
    lines = ["import torch", "class M:", f"    def forward(self, x, {params}):", "        h = torch.relu(x)"]
    for k in range(blocks):
        lines += [f"        t{k} = torch.tanh(x + h)", f"        x = t{k} * p{k % 10}",
                  f"        if self.exit_{k}:", "            return x"]
    lines.append("        return torch.sigmoid(h) * x")
    return "\n".join(lines) + "\n"


def _atoms(blocks: int) -> dict[str, int]:
    """Atoms per relation, for the program a cold `adopter facts` runs (core, rules, structures)."""
    programs, extra = pipeline._programs(rules_program(load_rules()), True)
    model = solve(extract_source(_long_forward(blocks), "long.py"), extra,
                  forward_structure_parts(SUMMARY_MAX_GUARDS), programs, keep=None)
    return {name: len(rows) for name, rows in model.relations.items()}


def test_no_relation_grows_faster_than_the_method():
    # Before guard scopes and live-only reaching definitions, every statement after k exits
    # carried k literals (stmt_lit, node_lit, flow_lit: 4x for 2x the length) and each
    # temporary reached every later statement (reach_in: 3.6x).
    short, long_ = _atoms(100), _atoms(200)
    growth = {name: long_.get(name, 0) / count for name, count in short.items() if count}
    assert max(growth.values()) < 2.1, sorted(growth.items(), key=lambda item: -item[1])[:5]
