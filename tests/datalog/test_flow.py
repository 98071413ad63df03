"""adopter/datalog/flow: nested calls unchained, def-use data flow, reassignment breaks a chain."""

import textwrap

import pytest

from conftest import facts_of, relation

NESTED = """
from torch import nn
class M(nn.Module):
    def __init__(self):
        self.dropout = nn.Dropout(0.1)
        self.LayerNorm = nn.LayerNorm(4)
    def forward(self, h, r):
        return self.LayerNorm(self.dropout(h) + r)
"""


def _flows_by_type(code: str) -> set[tuple[str, str]]:
    from conftest import facts_of
    from adopter.datalog.engine import MAIN_PROGRAM, QUERY_PROGRAMS, solve
    model = solve(facts_of(code), programs=(MAIN_PROGRAM, *QUERY_PROGRAMS), keep={"node_type", "feasible_flow"})
    types = {n: t.string for n, t in model.get("node_type")}
    return {(types[a], types[b]) for a, b in model.get("feasible_flow")}


def test_nested_calls_are_unchained_into_connected_nodes():
    assert _flows_by_type(NESTED) == {("torch.nn.Dropout", "+"), ("+", "torch.nn.LayerNorm")}


def test_flow_follows_values_through_assignments_not_names():
    code = """
    from torch import nn
    class M(nn.Module):
        def __init__(self):
            self.a = nn.Linear(2, 2)
            self.b = nn.ReLU()
        def forward(self, x):
            y = self.a(x)
            z = y
            return self.b(z)
    """
    assert _flows_by_type(code) == {("torch.nn.Linear", "torch.nn.ReLU")}


def test_reassignment_breaks_the_chain():
    code = """
    from torch import nn
    class M(nn.Module):
        def __init__(self):
            self.a = nn.Linear(2, 2)
            self.b = nn.ReLU()
        def forward(self, x, other):
            y = self.a(x)
            y = other
            return self.b(y)
    """
    assert _flows_by_type(code) == set()


def test_both_branch_definitions_reach_a_later_use():
    code = """
    from torch import nn
    class M(nn.Module):
        def __init__(self):
            self.a = nn.Linear(2, 2)
            self.n = nn.LayerNorm(2)
            self.b = nn.ReLU()
        def forward(self, x):
            x = self.a(x)
            if self.flag:
                x = self.n(x)
            return self.b(x)
    """
    assert _flows_by_type(code) == {("torch.nn.Linear", "torch.nn.LayerNorm"),
                                    ("torch.nn.LayerNorm", "torch.nn.ReLU"),
                                    ("torch.nn.Linear", "torch.nn.ReLU")}


def test_tensor_methods_and_operators_are_nodes_but_shape_arithmetic_on_config_is_not():
    code = """
    import torch
    class M:
        def forward(self, x):
            n = self.heads * 2
            return torch.matmul(x.transpose(-1, -2), x) / n
    """
    kinds = {k for _, k in relation(code, "node_kind")}
    types = {t for _, t in relation(code, "node_type")}
    assert types == {"torch.Tensor.transpose", "torch.matmul", "/"}
    assert kinds == {"method", "function", "op"}


SPLITS = {
    # the items of a split tensor are tensors: an operator on one is a node
    "method": ("q, k, v = self.qkv(x).unbind(0)", {"*"}),
    "split": ("a, b = self.qkv(x).split(4, dim=-1)", {"*"}),
    "chunk of three": ("a, b, c = self.qkv(x).chunk(3, dim=-1)", {"*"}),
    "function": ("a, b = torch.split(self.qkv(x), 4, dim=-1)", {"*", "torch.split"}),
    # a split of what is not a tensor gives no tensor: no node
    "not a tensor": ("a, b = self.names.split(',')", set()),
}


@pytest.mark.parametrize("name", SPLITS)
def test_items_of_a_split_tensor_are_tensors(name):
    split, expected = SPLITS[name]
    code = f"""
    import torch
    from torch import nn
    class M(nn.Module):
        def __init__(self):
            self.qkv = nn.Linear(4, 12)
        def forward(self, x):
            {split}
            return {split.split(",")[0]} * 2
    """
    types = {t for _, t in relation(code, "node_type")} - {"torch.nn.Linear", "torch.Tensor.unbind", "torch.Tensor.split",
                                                           "torch.Tensor.chunk"}
    assert types == expected


def test_a_module_level_function_of_the_file_runs_inlined_with_its_parameters_bound():
    # `scale(h, 2.0)` is not a node of its own: its body's nodes join the forward's
    # structure, parameter 0 bound to the first argument (no `self` to skip)
    code = """
    import torch
    from torch import nn
    def scale(x, factor):
        y = torch.tanh(x)
        return y * factor
    class M(nn.Module):
        def __init__(self):
            self.a = nn.Linear(2, 2)
            self.b = nn.ReLU()
        def forward(self, h):
            z = scale(self.a(h), 2.0)
            return self.b(z)
    """
    assert _flows_by_type(code) == {("torch.nn.Linear", "torch.tanh"), ("torch.tanh", "*"), ("*", "torch.nn.ReLU")}


def _reaching(code: str, var: str) -> set[tuple[int, int]]:
    """(line of a use of `var`, line of a definition it may see) for a code snippet; a
    parameter's definition is at the line of its `def`."""
    from conftest import facts_of
    from adopter.datalog.engine import solve
    facts = facts_of(code)
    model = solve(facts, keep={"use_def_var"})
    line = {row[0]: row[3] for row in facts.rows["expr"]}
    line.update({row[0]: row[3] for row in facts.rows["stmt"]})
    line.update({row[0]: row[2] for row in facts.rows["function_def"]})
    return {(line[e.number], line[d.number]) for e, d, v in model.get("use_def_var") if v.string == var}


# Each snippet is a method body; (use line, definition line) pairs of `x`. Line 3 is the first
# line of the body.
REACHING = {
    "a walrus defines its target for later statements": ("""
        if (x := h.abs()) is not None:
            pass
        return x
        """, {(5, 3)}),
    "a walrus that may not run leaves the old value too": ("""
        x = h
        if h and (x := h.abs()):
            pass
        return x
        """, {(6, 3), (6, 4)}),
    "a walrus is seen by the rest of its own statement": ("""
        y = (x := h) + x
        """, {(3, 3)}),
    "a `with` target is seen by the body, and not the earlier value": ("""
        x = h
        with a(h) as (x, y), b(x):
            return x
        """, {(4, 3), (5, 4)}),
    "a closure reads any definition of the function, even a later one; its parameter only its own body": ("""
        def g():
            return x
        def k(x):
            return x
        x = h
        x = h + 1
        return g()
        """, {(4, 7), (4, 8), (6, 5)}),
    "a lambda's free name is a read, its parameter is not": ("""
        x = h
        f = lambda: x
        g = lambda x: x
        """, {(4, 3)}),
    "a comprehension's variable is not the function's variable, its other names are": ("""
        x = h
        a = [x for x in hs]
        return [x + y for y in hs]
        """, {(5, 3)}),
    "`del x` needs x": ("""
        x = h
        del x
        """, {(4, 3)}),
    "an except handler sees every definition of the try body": ("""
        try:
            x = h
            x = h + 1
        except ValueError:
            return x
        """, {(7, 4), (7, 5)}),
    "a for target may not be assigned (empty iterable)": ("""
        x = h
        for x in hs:
            pass
        return x
        """, {(6, 3), (6, 4)}),
    "a case capture is defined in its case, and maybe not when it fails": ("""
        x = h
        match h:
            case [x]:
                return x
            case _:
                return x
        """, {(6, 5), (8, 3), (8, 5)}),
    "a case guard sees the case's captures": ("""
        x = h
        match h:
            case [x] if x > 0:
                pass
        """, {(5, 5)}),
    "nested and starred targets are definitions": ("""
        x = h
        (a, *x), b = hs
        return x
        """, {(5, 4)}),
    "`raise ... from x` reads x": ("""
        x = h
        raise ValueError() from x
        """, {(4, 3)}),
}


@pytest.mark.parametrize("name", REACHING)
def test_reaching_definitions_of_every_statement_kind(name):
    body, expected = REACHING[name]
    code = "class M:\n    def f(self, h, hs):\n" + textwrap.indent(textwrap.dedent(body).strip("\n"), " " * 8) + "\n"
    assert _reaching(code, "x") == expected


def test_calls_in_a_lambda_or_nested_def_are_not_nodes_of_the_method_and_a_walrus_passes_its_value():
    code = """
    import torch
    class M:
        def forward(self, h):
            f = lambda t: torch.relu(t)
            def g(t):
                return torch.sigmoid(t)
            return torch.exp((y := torch.tanh(h)))
    """
    assert _flows_by_type(code) == {("torch.tanh", "torch.exp")}


# Control flow that leaves or enters a run of statements by other ways than its ends.
CONTROL_FLOW = """
import torch
def f(x, y, items, flag):
    a = x
    b = 1
    print(b)
    for item in items:
        c = a
        log(item)
        if item:
            continue
        log(item)
        a = item
        log(item)
    else:
        log(b)
        z = a
    try:
        log(y)
        a = y
        log(y)
        log(y)
    except ValueError as err:
        log(err)
        w = a
    finally:
        log(b)
        v = a
    while flag:
        log(flag)
        if flag:
            break
        a = flag
    log(b)
    for a in items:
        pass
    log(b)
    log(b)
    k = (n := len(items)) and (m := n)
    log(b)
    match y:
        case [a, *rest]:
            log(b)
        case {"k": a}:
            log(b)
        case _:
            log(b)
    log(b)
    log(b)
    def inner():
        return a
    log(b)
    return a, m, k, inner
"""


def _use_def(code: str, sparse: bool) -> set[tuple[int, int, str]]:
    from conftest import facts_of
    from adopter.datalog.engine import solve
    facts = facts_of(code)
    if not sparse:
        facts.rows["quiet_run"] = []
    model = solve(facts, keep={"use_def_var"})
    return {(e.number, d.number, v.string) for e, d, v in model.get("use_def_var")}


def test_jumping_quiet_runs_keeps_every_definition_a_read_sees():
    facts_runs = facts_of(CONTROL_FLOW).rows["quiet_run"]
    assert len(facts_runs) > 20  # the snippet has runs to jump
    assert _use_def(CONTROL_FLOW, sparse=True) == _use_def(CONTROL_FLOW, sparse=False)


def test_jumping_quiet_runs_keeps_the_zoo_s_data_flow(zoo):
    for name in ("modeling_bert.py", "modeling_longt5.py", "modeling_jukebox.py", "modeling_wav2vec2.py"):
        code = (zoo / name).read_text()
        assert _use_def(code, sparse=True) == _use_def(code, sparse=False), name


def test_a_long_quiet_run_holds_no_rows_of_the_variable():
    quiet = "".join(f"    log({i})\n" for i in range(200))
    code = f"def f(x):\n    a = x\n{quiet}    return a\n"
    live = {row for row in relation(code, "live") if row[1] == "a"}
    reach = {row for row in relation(code, "reach_in") if row[2] == "a"}
    assert len(live) == 1 and len(reach) == 1  # at the return only, not at the 200 calls
