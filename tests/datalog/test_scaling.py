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


def _normed_forward(blocks: int) -> str:
    """A forward of `blocks` RMSNorm matches, each below every earlier early exit, whose
    variance is read again after the next exit (a read the match does not need)."""
    lines = ["import torch", "class M:", "    def forward(self, x):"]
    for k in range(blocks):
        lines += [f"        v{k} = x.pow(2).mean(-1, keepdim=True)", f"        x = x * torch.rsqrt(v{k} + 1e-06)",
                  f"        if self.exit_{k}:", "            return x", f"        x = x + v{k}"]
    lines.append("        return x")
    return "\n".join(lines) + "\n"


def _atoms(blocks: int, shape=_long_forward) -> dict[str, int]:
    """Atoms per relation, for the program a cold `adopter facts` runs (core, rules, structures)."""
    programs, extra = pipeline._programs(rules_program(load_rules()), True)
    model = solve(extract_source(shape(blocks), "long.py"), extra,
                  forward_structure_parts(SUMMARY_MAX_GUARDS), programs, keep=None)
    return {name: len(rows) for name, rows in model.relations.items()}


def test_no_relation_grows_faster_than_the_method():
    # Before guard scopes and live-only reaching definitions, every statement after k exits
    # carried k literals (stmt_lit, node_lit, flow_lit: 4x for 2x the length) and each
    # temporary reached every later statement (reach_in: 3.6x).
    short, long_ = _atoms(100), _atoms(200)
    growth = {name: long_.get(name, 0) / count for name, count in short.items() if count}
    assert max(growth.values()) < 2.1, sorted(growth.items(), key=lambda item: -item[1])[:5]


def test_the_checks_of_matches_below_many_exits_grow_with_the_method():
    # A candidate's guard literals were listed per candidate and per reader (lit/3,
    # reader_lit/4): a match below k exits carried k of them (4x for 2x the length). The
    # asked scopes' chains (scope_anc and scope_lit) still are that long.
    short, long_ = _atoms(40, _normed_forward), _atoms(80, _normed_forward)
    assert long_["match_node"] == 2 * short["match_node"] > 0
    assert long_["match_eager"] == 2 * short["match_eager"] > 0
    checks = ("lit", "reader_lit", "mscope", "reader_only", "scope_above", "equal_pair")
    growth = {name: long_.get(name, 0) / short[name] for name in checks if short.get(name)}
    assert growth and max(growth.values()) < 2.1, growth
    # a reported path holds the literals of the scopes nearest each node, at most 16 here
    # (one literal a scope): it was every exit above the node, 15,800 rows at 80 blocks (5,720 now)
    assert 0 < long_["report_lit"] <= 16 * long_["report_site"], (long_["report_lit"], long_["report_site"])
    assert long_["report_path_cut"] > short["report_path_cut"] > 0


def _nested_forward(blocks: int) -> str:
    """A forward that defines a function in each of `blocks` steps (as `create_custom_forward`
    in a checkpointed layer loop), each reading two names of the forward."""
    lines = ["import torch", "class M:", "    def forward(self, x, scale=None):", "        h = torch.relu(x)"]
    for k in range(blocks):
        lines += [f"        def step_{k}(y):", "            return y * h + scale", f"        t{k} = step_{k}(x)",
                  f"        x = t{k}"]
    lines.append("        return x")
    return "\n".join(lines) + "\n"


def test_names_a_nested_function_reads_are_resolved_per_name_read():
    # binds_outer/3 was derived for every nested function and every name of the function
    # around it (4x for 2x the length); it is asked only for the names a nested function
    # reads and does not bind
    short, long_ = _atoms(50, _nested_forward), _atoms(100, _nested_forward)
    growth = {name: long_[name] / short[name] for name in ("binds_outer", "free_read", "outer_asked")}
    assert short["free_read"] == 2 * 50 and max(growth.values()) < 2.1, growth


def _loop_after_run(blocks: int) -> str:
    """A forward whose `mask` is read in a loop after `blocks` steps that never name it, and
    again after that loop (the loop may run no step: its CFG has a bypass edge around it)."""
    lines = ["import torch", "class M:", "    def forward(self, x, mask=None):", "        h = torch.relu(x)"]
    for k in range(blocks):
        lines += [f"        t{k} = torch.tanh(x + h)", f"        x = t{k} * 2"]
    lines += ["        for layer in self.layers:", "            x = layer(x, mask)", "        x = x * mask",
              "        mask = None", "        return x"]
    return "\n".join(lines) + "\n"


def _rows_of(blocks: int, variable: str) -> dict[str, int]:
    model = solve(extract_source(_loop_after_run(blocks), "loop.py"), keep={"live", "reach_in", "use_def_var"})
    return {name: sum(1 for row in model.get(name) if row[-1].string == variable)
            for name in ("live", "reach_in", "use_def_var")}


def test_a_variable_read_after_a_loop_that_may_not_run_jumps_the_statements_before_it():
    # the bypass edge around the loop led liveness back into the run of statements before it,
    # which it then walked statement by statement (live and reach_in grew with the run: 2x for
    # 2x the steps); the run's exits now include the bypass target (run_exit/3)
    short, long_ = _rows_of(100, "mask"), _rows_of(200, "mask")
    assert short == long_, (short, long_)
    assert short["use_def_var"] == 2 and short["live"] < 10, short  # the two reads see the entry's mask
