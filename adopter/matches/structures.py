"""Model structures: the DL nodes of a method, one sequence per feasible path.

The analysis (which nodes exist, their types, inputs, guards and which paths are
feasible) is Datalog's (`adopter/datalog/paths/structures.lp`); this module only orders the
nodes of each path by evaluation order, names temporaries, and prints them in the
paper's notation: `torch.nn.Linear(x) -> y; y + z -> t1; ...`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import clingo

from adopter.records import AdopterError, Diagnostic
from adopter.datalog.engine import Model, solve, symbol_value
from adopter.extract.python_facts import FileFacts

DEFAULT_MAX_GUARDS = 10  # `adopter structures`: at most 2**10 paths per method are enumerated
SUMMARY_MAX_GUARDS = 6   # the `adopter facts` summary: cheap (2**6), larger methods are counted apart


@dataclass
class Node:
    kind: str
    type: str
    inputs: list[tuple[object, str]]  # (position or keyword, rendered input)
    output: str
    line: int

    def render(self) -> str:
        args = ", ".join(text if isinstance(pos, int) else f"{pos}={text}" for pos, text in self.inputs)
        if self.kind == "op" and len(self.inputs) == 2:
            return f"{self.inputs[0][1]} {self.type} {self.inputs[1][1]} -> {self.output}"
        if self.kind == "op":
            return f"{self.type}{self.inputs[0][1]} -> {self.output}"
        return f"{self.type}({args}) -> {self.output}"


@dataclass
class Structure:
    nodes: list[Node]
    guards: list[tuple[str, str]] = field(default_factory=list)  # (condition, pos/neg)

    def render(self) -> str:
        return "; ".join(node.render() for node in self.nodes)


class _View:
    """Indexes of one solved model, for rendering."""

    def __init__(self, model: Model, facts: FileFacts):
        self.pos = {row[0]: row[3:7] for row in facts.rows["expr"]}
        self.text = {row[0]: row[1] for relation in ("constant", "name", "expr_text") for row in facts.rows[relation]}
        self.kind = {a[0]: a[1].name for a in model.get("node_kind")}
        self.type: dict[clingo.Symbol, str] = {}
        for node, type_ in model.get("node_type"):
            self.type.setdefault(node, type_.string)
        self.out = {a[0]: a[1].string for a in model.get("node_out")}
        self.order = {node: _flat_key(key) for node, key in model.get("node_eval_key")}
        self.inputs: dict[clingo.Symbol, dict] = {}  # node -> position -> its sources, sorted
        for node, pos, ctx, expr in model.get("input_origin"):
            self.inputs.setdefault(node, {}).setdefault(symbol_value(pos), []).append(("expr", ctx, expr.number))
        for node, pos, source in model.get("node_input_node"):
            self.inputs.setdefault(node, {}).setdefault(symbol_value(pos), []).append(("node", source))
        self.written = {(node, symbol_value(pos)): expr.number for node, pos, _ctx, expr in model.get("node_input")}

    def node_inputs(self, node: clingo.Symbol) -> list[tuple[object, tuple]]:
        """(position, source) per input of `node`: positions in order, then keywords as
        written (of one position's several origins, the first by text). An argument passed
        by keyword is also the input at its position (flow/nodes.lp): it is shown once, by keyword."""
        found = self.inputs.get(node, {})
        by_keyword = {self.written.get((node, pos)) for pos in found if not isinstance(pos, int)} - {None}

        def order(pos) -> tuple:
            return (0, pos, 0) if isinstance(pos, int) else (1, 0, self.written.get((node, pos), 0))

        return [(pos, min(found[pos], key=str)) for pos in sorted(found, key=order)
                if not (isinstance(pos, int) and self.written.get((node, pos)) in by_keyword)]


def _flat_key(key: clingo.Symbol) -> list[tuple]:
    """node_eval_key's nested key as a list of sites, outermost call first."""
    if not key.arguments:
        return []
    context, site, *index = key.arguments
    return [*_flat_key(context), tuple(n.number for n in site.arguments), *((i.number,) for i in index)]


def _root_of(model: Model, class_name: str, function: str, path: str) -> clingo.Symbol:
    classes = {a[1].string: a[0].number for a in model.get("class_def")}
    if class_name not in classes:
        raise AdopterError(Diagnostic(path, None, None, f"no class named {class_name!r}"))
    cls = classes[class_name]
    inherited = {(c.number, fn.number) for c, fn in model.get("inherited_root")}
    for c, name, fn in model.get("resolves_method"):
        if c.number == cls and name.string == function:
            # a subclass that builds layers its base's forward reads has a root of its own
            return clingo.Function("u", [fn, c]) if (cls, fn.number) in inherited else clingo.Function("r", [fn])
    raise AdopterError(Diagnostic(path, None, None, f"class {class_name!r} has no method {function!r}"))


def model_structures(facts: FileFacts, class_name: str, function: str = "forward",
                     max_guards: int = DEFAULT_MAX_GUARDS) -> list[Structure]:
    """Every distinct model structure of `class_name.function`, in path order."""
    root = _root_of(solve(facts, keep={"class_def", "resolves_method", "inherited_root"}), class_name, function, facts.path)
    model = solve(facts, extra_program=f"structure_root({root}).",
                  parts=[("structures", [clingo.Number(max_guards)]), ("structure_order", [])])
    for r, count in model.get("too_many_guards"):
        if r == root:
            raise AdopterError(Diagnostic(facts.path, None, None,
                                          f"{class_name}.{function} has {count.number} distinct guards; "
                                          f"more than --max-guards {max_guards} paths to enumerate"))
    view = _View(model, facts)
    paths: dict[int, list[clingo.Symbol]] = {}
    for r, scenario, node in model.get("structure_node"):
        if r == root:
            paths.setdefault(scenario.number, []).append(node)
    guards: dict[int, list] = {}
    for r, scenario, text, polarity in model.get("structure_guard"):
        if r == root:
            guards.setdefault(scenario.number, []).append((text.string, polarity.name))
    structures, seen = [], set()
    for scenario in sorted(paths) or [0]:
        structure = _render_path(view, paths.get(scenario, []), sorted(guards.get(scenario, [])))
        text = structure.render()
        if text not in seen:
            seen.add(text)
            structures.append(structure)
    return structures


def count_structures(model: Model) -> tuple[int, int]:
    """(distinct structures, roots skipped for too many guards) of a model solved with
    the `structures` part: paths with the same node set are one structure."""
    scope_sets: dict[int, set[frozenset]] = {}
    paths: dict[tuple, set] = {}
    # a node is on a path exactly when its scope is: the same scopes, the same nodes
    for root, scenario, scope in model.ids("structure_scope"):  # symbol ids: no Symbol objects to hash
        paths.setdefault((root, scenario), set()).add(scope)
    for (root, _), scopes in paths.items():
        scope_sets.setdefault(root, set()).add(frozenset(scopes))
    return sum(len(s) for s in scope_sets.values()), len(model.ids("too_many_guards"))


# the parts that enumerate the structures of every forward method, with at most `max_guards` guards each
def forward_structure_parts(max_guards: int) -> list[tuple[str, list[clingo.Symbol]]]:
    return [("structures", [clingo.Number(max_guards)]), ("forward_structures", [])]


def _render_path(view: _View, nodes: list[clingo.Symbol], guards: list) -> Structure:
    ordered = sorted(nodes, key=lambda node: view.order[node])
    names: dict[clingo.Symbol, str] = {}
    site_node = {}  # (ctx, expr) -> node, to render nested inputs as the inner node's output
    for node in ordered:
        if node.name == "n":
            site_node[(node.arguments[0], node.arguments[1].number)] = node
    temp = 0
    rendered = []
    for node in ordered:
        if node in view.out:
            names[node] = view.out[node]
        else:
            temp += 1
            names[node] = f"t{temp}"
        inputs = []
        for pos, source in view.node_inputs(node):
            if source[0] == "node":
                inputs.append((pos, names.get(source[1], "?")))
                continue
            _, ctx, expr = source
            inner = site_node.get((ctx, expr))
            if inner is not None and inner in names:
                inputs.append((pos, names[inner]))
            else:
                inputs.append((pos, view.text.get(expr, "…")))
        expr = node.arguments[1].number
        rendered.append(Node(view.kind[node], view.type.get(node, "?"), inputs, names[node], view.pos[expr][0]))
    return Structure(rendered, guards)
