"""adopter/datalog/paths: guards, consistent literals, contradictory guards, early returns."""

from conftest import facts_of, structures_of
from adopter.datalog.engine import MAIN_PROGRAM, QUERY_PROGRAMS, solve

QUERIES = (MAIN_PROGRAM, *QUERY_PROGRAMS)  # flow and feasible_flow are query relations

DPT_LIKE = """
from torch import nn
class Block(nn.Module):
    def __init__(self, use_bn):
        self.conv1 = nn.Conv2d(1, 1, 1)
        self.conv2 = nn.Conv2d(1, 1, 1)
        if use_bn:
            self.bn1 = nn.BatchNorm2d(1)
            self.bn2 = nn.BatchNorm2d(1)
    def forward(self, x):
        x = self.conv1(x)
        if self.use_bn:
            x = self.bn1(x)
        x = self.conv2(x)
        if self.use_bn:
            x = self.bn2(x)
        return x
"""


def test_the_same_guard_twice_gives_two_paths_not_four():
    assert structures_of(DPT_LIKE, "Block") == [
        "torch.nn.Conv2d(x) -> x; torch.nn.Conv2d(x) -> x",
        "torch.nn.Conv2d(x) -> x; torch.nn.BatchNorm2d(x) -> x; torch.nn.Conv2d(x) -> x; torch.nn.BatchNorm2d(x) -> x",
    ]


def test_negated_guard_is_the_same_condition_with_the_other_polarity():
    code = """
    from torch import nn
    class M(nn.Module):
        def __init__(self):
            self.a = nn.Linear(1, 1)
            self.b = nn.ReLU()
        def forward(self, x):
            if self.flag:
                x = self.a(x)
            if not self.flag:
                x = self.b(x)
            return x
    """
    assert structures_of(code, "M") == ["torch.nn.ReLU(x) -> x", "torch.nn.Linear(x) -> x"]
    model = solve(facts_of(code), programs=QUERIES, keep={"flow", "feasible_flow"})
    assert len(model.get("flow")) == 1          # Linear -> ReLU by reaching definitions...
    assert model.get("feasible_flow") == []     # ...but no path runs both


def test_statements_after_an_early_return_are_guarded_by_its_negation():
    code = """
    from torch import nn
    class M(nn.Module):
        def __init__(self):
            self.a = nn.Linear(1, 1)
            self.b = nn.ReLU()
        def forward(self, x):
            if self.skip:
                return self.a(x)
            return self.b(x)
    """
    assert structures_of(code, "M") == ["torch.nn.ReLU(x) -> t1", "torch.nn.Linear(x) -> t1"]


def test_elif_chains_exclude_each_other():
    code = """
    import torch
    class M:
        def forward(self, x):
            if self.mode == "a":
                x = torch.relu(x)
            elif self.mode == "b":
                x = torch.tanh(x)
            else:
                x = torch.sigmoid(x)
            return x
    """
    assert sorted(structures_of(code, "M")) == [
        "torch.relu(x) -> x", "torch.sigmoid(x) -> x", "torch.tanh(x) -> x"]


def _flow_types(code: str, relation: str) -> set[tuple[str, str]]:
    model = solve(facts_of(code), programs=QUERIES, keep={"node_type", relation})
    types = {n: t.string for n, t in model.get("node_type")}
    return {(types[a], types[b]) for a, b in model.get(relation)}


def test_statements_after_several_exits_carry_each_negated_exit():
    code = """
    import torch
    class M:
        def forward(self, x):
            y = torch.relu(x)
            if self.a:
                return y
            if self.b:
                raise ValueError()
            z = torch.tanh(y)
            if self.a:
                z = torch.sigmoid(z)
            return z
    """
    assert _flow_types(code, "flow") == {("torch.relu", "torch.tanh"), ("torch.tanh", "torch.sigmoid")}
    # sigmoid needs `self.a` true, which the first exit already made false
    assert _flow_types(code, "feasible_flow") == {("torch.relu", "torch.tanh")}
    assert sorted(structures_of(code, "M")) == ["torch.relu(x) -> y", "torch.relu(x) -> y; torch.tanh(y) -> z"]


def test_a_helper_runs_under_the_guards_of_its_call():
    code = """
    import torch
    class M:
        def helper(self, h):
            if not self.c:
                return torch.tanh(h)
            return h
        def forward(self, x):
            y = torch.relu(x)
            if self.c:
                y = self.helper(y)
                y = torch.sigmoid(y)
            return y
    """
    assert _flow_types(code, "flow") == {("torch.relu", "torch.tanh"), ("torch.tanh", "torch.sigmoid"),
                                         ("torch.relu", "torch.sigmoid")}
    # tanh runs only when `self.c` is false, sigmoid only when it is true
    assert _flow_types(code, "feasible_flow") == {("torch.relu", "torch.tanh"), ("torch.relu", "torch.sigmoid")}


MATCH = """
import torch
class M:
    def forward(self, x):
        match self.mode:
            case "a":
                x = torch.relu(x)
            case "b" if self.flag:
                x = torch.tanh(x)
            case _:
                x = torch.sigmoid(x)
        return torch.exp(x)
"""


def test_each_case_of_a_match_is_a_path_of_its_own():
    assert sorted(structures_of(MATCH, "M")) == [
        "torch.relu(x) -> x; torch.exp(x) -> t1",
        "torch.sigmoid(x) -> x; torch.exp(x) -> t1",
        "torch.tanh(x) -> x; torch.exp(x) -> t1",
    ]


def test_a_case_is_a_guard_literal_true_in_its_body_and_false_in_the_later_cases():
    # node_lit is listed for the nodes a check asks about: here, every node
    model = solve(facts_of(MATCH), "lit_asked(X) :- dl_node(X).", keep={"node_type", "node_lit"})
    types = {node: t.string for node, t in model.get("node_type")}
    lits: dict[str, set] = {}
    for node, text, polarity in model.get("node_lit"):
        lits.setdefault(types[node], set()).add((text.string, polarity.name))
    a, b = 'match self.mode: case "a"', 'match self.mode: case "b" if self.flag'
    assert lits == {"torch.relu": {(a, "pos")}, "torch.tanh": {(a, "neg"), (b, "pos")},
                    "torch.sigmoid": {(a, "neg"), (b, "neg")}}


def test_statements_after_a_match_whose_case_returns_run_only_when_it_is_not_taken():
    code = """
    import torch
    class M:
        def forward(self, x):
            match self.mode:
                case "a":
                    return torch.relu(x)
            return torch.tanh(x)
    """
    assert sorted(structures_of(code, "M")) == ["torch.relu(x) -> t1", "torch.tanh(x) -> t1"]


HELPER_ORDER = """
from torch import nn
class M(nn.Module):
    def __init__(self):
        self.a = nn.Linear(1, 1)
        self.b = nn.ReLU()
    def helper(self, y):
        return self.b(y)
    def forward(self, x):
        return self.helper(self.a(x)) + x
"""


def _structure_model(code: str):
    import clingo
    facts = facts_of(code)
    root = next(f"r({f})" for f, name, *_ in facts.rows["function_def"] if name == "forward")
    return solve(facts, extra_program=f"structure_root({root}).",
                 parts=[("structures", [clingo.Number(4)]), ("structure_order", [])],
                 keep={"node_eval_key", "input_origin", "node_type"})


def test_nodes_sort_by_evaluation_order_through_a_helper():
    """node_eval_key: the argument first, the helper's node at its call site, the sum last."""
    from adopter.matches.structures import _flat_key
    model = _structure_model(HELPER_ORDER)
    types = {node: t.string for node, t in model.get("node_type")}
    ordered = sorted(model.get("node_eval_key"), key=lambda row: _flat_key(row[1]))
    assert [types[node] for node, _ in ordered] == ["torch.nn.Linear", "torch.nn.ReLU", "+"]


def test_a_helpers_parameter_is_followed_to_the_callers_argument():
    """input_origin: the ReLU's input `y` is the caller's `self.a(x)`, the Linear's site."""
    model = _structure_model(HELPER_ORDER)
    types = {node: t.string for node, t in model.get("node_type")}
    # (every method is a root of its own too: the ReLU inlined at forward's call, forward's Linear)
    relu = next(node for node in types if types[node] == "torch.nn.ReLU" and node.arguments[0].name == "i")
    caller = relu.arguments[0].arguments[1]
    linear = next(node for node in types if types[node] == "torch.nn.Linear" and node.arguments[0] == caller)
    origins = {(pos.number, ctx, expr) for node, pos, ctx, expr in model.get("input_origin") if node == relu}
    assert origins == {(0, linear.arguments[0], linear.arguments[1])}


SCOPED_LAYERS = """
from torch import nn
class M(nn.Module):
    def __init__(self):
""" + "".join(f"        self.a{k} = nn.Linear(4, 4)\n        self.b{k} = nn.ReLU()\n" for k in range(20)) + """        self.c = nn.Tanh()
        self.d = nn.GELU()
    def forward(self, x):
""" + "".join(f"        x = self.a{k}(x)\n" for k in range(20)) + """\
        if self.p:
""" + "".join(f"            x = self.b{k}(x)\n" for k in range(20)) + """\
        if self.q:
            x = self.c(x)
        else:
            x = self.d(x)
        return x
"""


def test_the_summary_counts_paths_by_their_scopes_as_by_their_nodes():
    """The summary's structures are distinct scope sets (structure_scope/3, one row per scope
    and path); the nodes of a path (structure_node/3) are grounded only to write it out, and
    give the same count."""
    import clingo
    from adopter.matches.structures import count_structures, forward_structure_parts
    facts = facts_of(SCOPED_LAYERS)
    summary = solve(facts, parts=forward_structure_parts(4), keep=None)
    assert "structure_node" not in summary.relations
    scopes = summary.ids("structure_scope")
    assert 0 < len(scopes) <= 4 * 4  # 4 paths (p, q) of at most 4 scopes, for 42 nodes
    root = next(f"r({f})" for f, name, *_ in facts.rows["function_def"] if name == "forward")
    written = solve(facts, extra_program=f"structure_root({root}).",
                    parts=[("structures", [clingo.Number(4)]), ("structure_order", [])], keep={"structure_node"})
    node_sets: dict = {}
    for _root, scenario, node in written.ids("structure_node"):
        node_sets.setdefault(scenario, set()).add(node)
    assert count_structures(summary) == (len({frozenset(s) for s in node_sets.values()}), 0) == (4, 0)
