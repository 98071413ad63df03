"""Type checks of a parsed rule: what each `$variable` stands for, and which names it may use.

A `$variable` is one of
  a module      the output of an `init:` node (`torch.nn.Dropout() -> $drop`): it can only be
                called (`$drop($x) -> $a`); a target may also pass it to a kernel
                (`adopter_kernels.linear_bias_act($dense, $act, $x)`), which reads its parameters;
  a tensor      the output of a `forward:` node, or a forward input that no node of the
                pattern computes (an input of the matched code, e.g. `$residual`);
  a value       an argument of an `init:` node (`torch.nn.Linear($dim) -> $l`): configuration,
                known when `__init__` runs; a forward input may name the same value (its
                source text must then be the same).
A qualified name (`torch.nn.LayerNorm`, `torch.Tensor.view`) must be in the catalogue
(`adopter/catalogue/torch.tsv`: name and kind, generated from the installed torch by
evaluation/torch_catalogue.py), or declared by the rule (`extern: transformers.activations.ACT2FN`).
An `init:` node constructs a module class (a `torch.nn.Module` subclass) or an extern.
The first problem raises `AdopterError` at the variable's or the name's file:line:col.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass

from adopter.catalogue import kinds
from adopter.records import AdopterError, Diagnostic
from adopter.rules.model import Input, PatternNode, Rule

def named_types(rule: Rule) -> set[str]:
    """Every qualified name the rule's patterns call or construct."""
    return {callee for node in _all_nodes(rule) if node.kind == "layer" and not node.callee.startswith("$")
            for callee in node.callees}


def check_types(rule: Rule) -> None:
    """Raise `AdopterError` at the first variable used as what it is not, or unknown name."""
    _check_reached(rule)
    _check_variables(rule)
    _check_names(rule)


def _check_reached(rule: Rule) -> None:
    """`~$s` stands for steps that are no nodes of the match: a rewrite would drop them, so a
    rule that writes it must be detect-only; and it reaches from a node's output."""
    produced = {node.output for node in rule.forward_source if node.output}
    for item in (i for node in rule.init_source + rule.forward_target + rule.init_target for i in node.inputs):
        if item.arg.reached:
            raise _error(rule, item.line, item.col, f"`~{item.arg.var}` is written only in a `forward:` source pattern")
    for node in rule.forward_source:
        for item in node.inputs:
            if not item.arg.reached:
                continue
            if item.arg.var not in produced:
                raise _error(rule, item.line, item.col,
                             f"`~{item.arg.var}` reaches from a node's output; {item.arg.var} is not computed by this pattern")
            if rule.forward_target or rule.init_target:
                raise _error(rule, item.line, item.col,
                             f"`~{item.arg.var}` stands for steps that are not nodes of the match, which a rewrite would "
                             "drop: a rule that writes it has no target (`=> _`)")


@dataclass(frozen=True)
class _Site:
    """Where a variable is bound, for messages: "(bound by `init:` at 2:29)"."""

    line: int
    col: int
    how: str

    def __str__(self) -> str:
        return f"({self.how} at {self.line}:{self.col})"


_MODULE = "bound by `init:`"
_TENSOR = "computed in `forward:`"
_TARGET_MODULE = "bound by the target's `init:`"
_TARGET_TENSOR = "computed in the target's `forward:`"
_VALUE = "an `init:` argument"


def _all_nodes(rule: Rule) -> list[PatternNode]:
    return rule.init_source + rule.forward_source + rule.init_target + rule.forward_target


def _error(rule: Rule, line: int, col: int, message: str) -> AdopterError:
    return AdopterError(Diagnostic(rule.path, line, col, message))


def _outputs(nodes: list[PatternNode], how: str) -> dict[str, _Site]:
    """Each output variable of `nodes` and where it is first bound."""
    sites: dict[str, _Site] = {}
    for node in nodes:
        if node.output is not None and node.output not in sites:
            sites[node.output] = _Site(node.output_line, node.output_col, how)
    return sites


def _var_inputs(node: PatternNode) -> list[Input]:
    return [item for item in node.inputs if item.arg.var]


def _call_it(v: str) -> str:
    return f"call the module and use its output instead: `{v}(...) -> $out`, then `$out`"


def _callable(v: str) -> str:
    return (f"bind the module with an `init:` node (`init: torch.nn.Linear(...) -> {v}`), "
            f"or name the function (`torch.nn.functional.relu($x) -> $y`)")


_VALUES = "a constant, source text in backquotes like `config.hidden_size`, or a `$name` for a configuration value"


def _check_variables(rule: Rule) -> None:
    modules = _outputs(rule.init_source, _MODULE)
    tensors = _outputs(rule.forward_source, _TENSOR)
    values: dict[str, _Site] = {}
    for node in rule.init_source:
        if node.kind != "layer" or node.callee.startswith("$"):
            raise _error(rule, node.line, node.col,
                         "an init node must construct a qualified type: `torch.nn.X(...) -> $name`")
        for item in _var_inputs(node):
            w = item.arg.var
            if w in modules:
                raise _error(rule, item.line, item.col,
                             f"{w} is a module {modules[w]}, used here as a construction argument: a source "
                             f"pattern cannot tie a constructor's argument to another module; match the "
                             f"argument by its source text in backquotes (like `self.dense`), or leave it out")
            if w in tensors:
                raise _error(rule, item.line, item.col,
                             f"{w} is a tensor {tensors[w]}, used here as a construction argument, when no "
                             f"tensor exists yet; an `init:` argument is {_VALUES}")
            values.setdefault(w, _Site(item.line, item.col, _VALUE))
    seen: set[str] = set()
    for node in rule.init_source:
        v = node.output
        if v in seen:
            raise _error(rule, node.output_line, node.output_col,
                         f"{v} is bound twice in `init:`; give each module its own name")
        seen.add(v)

    seen = set()
    called: set[str] = set()
    for node in rule.forward_source:
        if node.kind == "layer" and node.callee.startswith("$"):
            _check_callee(rule, node, modules, tensors, values)
            called.add(node.callee)
        for item in _var_inputs(node):
            w = item.arg.var
            if w in modules:
                where = "an operand" if node.kind != "layer" else "a tensor input"
                raise _error(rule, item.line, item.col,
                             f"{w} is a module {modules[w]}, used here as {where}; {_call_it(w)}")
        v = node.output
        if v is None:
            continue
        if v in seen:
            raise _error(rule, node.output_line, node.output_col, f"{v} is bound twice; give each output its own name")
        seen.add(v)
        if v in modules:
            raise _error(rule, node.output_line, node.output_col,
                         f"{v} is a module {modules[v]} and a tensor here; give the output another name")
        if v in values:
            raise _error(rule, node.output_line, node.output_col,
                         f"{v} is a construction value {values[v]} and a tensor here; give the output another name")
    for v, site in modules.items():
        if v not in called:
            raise _error(rule, site.line, site.col,
                         f"init node {v} is not called in `forward:`; add a node `{v}(...) -> $out` there, "
                         f"or remove the init node")
    _check_targets(rule, modules, tensors, values)


def _check_callee(rule: Rule, node: PatternNode, modules: dict, tensors: dict, values: dict) -> None:
    v = node.callee
    if v in modules:
        return
    if v in tensors:
        raise _error(rule, node.line, node.col,
                     f"{v} is a tensor {tensors[v]}, called here as a module; only a module can be called: "
                     f"{_callable(v)}")
    if v in values:
        raise _error(rule, node.line, node.col,
                     f"{v} is a construction value {values[v]}, called here as a module; only a module can be called: "
                     f"{_callable(v)}")
    raise _error(rule, node.line, node.col, f"{v} is not bound by an `init:` node; {_callable(v)}")


def _check_targets(rule: Rule, modules: dict, tensors: dict, values: dict) -> None:
    """A target uses what the source binds, and the modules its own `init:` nodes build; it may
    pass a module to a call (a kernel that reads the module's parameters)."""
    new_modules = {v: site for v, site in _outputs(rule.init_target, _TARGET_MODULE).items() if v not in modules}
    new_tensors = {v: site for v, site in _outputs(rule.forward_target, _TARGET_TENSOR).items() if v not in tensors}
    all_modules, all_tensors = modules | new_modules, tensors | new_tensors
    source_vars = set(modules) | set(tensors) | set(values) | {
        item.arg.var for node in rule.forward_source for item in _var_inputs(node)}
    for node in rule.init_target + rule.forward_target:
        for item in _var_inputs(node):
            if item.arg.var not in source_vars and item.arg.var not in new_modules:
                raise _error(rule, item.line, item.col,
                             f"{item.arg.var} in a target is not bound by the source patterns; a target uses the "
                             f"source's variables, and the modules its own `init:` nodes build")
    for node in rule.init_target:
        if node.kind != "layer" or node.callee.startswith("$"):
            raise _error(rule, node.line, node.col,
                         "an init node must construct a qualified type: `torch.nn.X(...) -> $name`")
        v = node.output
        if v in all_tensors or v in values:
            what = f"a tensor {all_tensors[v]}" if v in all_tensors else f"a construction value {values[v]}"
            raise _error(rule, node.output_line, node.output_col,
                         f"{v} is {what} and a module here; give the module another name")
        for item in _var_inputs(node):
            w = item.arg.var
            if w in all_tensors:
                raise _error(rule, item.line, item.col,
                             f"{w} is a tensor {all_tensors[w]}, used here as a construction argument, when no "
                             f"tensor exists yet; a target's `init:` argument is a module or {_VALUES}")
    for node in rule.forward_target:
        if node.kind == "layer" and node.callee.startswith("$"):
            _check_callee(rule, node, all_modules, all_tensors, values)
        for item in _var_inputs(node) if node.kind != "layer" else ():
            if item.arg.var in all_modules:
                raise _error(rule, item.line, item.col,
                             f"{item.arg.var} is a module {all_modules[item.arg.var]}, used here as an operand; "
                             f"{_call_it(item.arg.var)}")
        if node.output in all_modules or node.output in values:
            what = (f"a module {all_modules[node.output]}" if node.output in all_modules
                    else f"a construction value {values[node.output]}")
            raise _error(rule, node.output_line, node.output_col,
                         f"{node.output} is {what} and a tensor here; give the output another name")
    _check_dropped(rule, modules, tensors, values)


def _check_dropped(rule: Rule, modules: dict, tensors: dict, values: dict) -> None:
    """A forward target replaces the source's nodes (but those it keeps): every value the
    replaced nodes read from the matched code, and every module they call, must reach the
    target (a module may instead be rebuilt by the target's `init:`, from its construction);
    else the rewritten code would not compute with it, and would be wrong without a word."""
    if not rule.forward_target:
        return
    passed = {item.arg.var for node in rule.forward_target for item in _var_inputs(node)}
    passed |= {node.callee for node in rule.forward_target if node.kind == "layer" and node.callee.startswith("$")}
    kept = set(rule.kept_nodes)
    for i, node in enumerate(rule.forward_source):
        if i in kept:
            continue
        for item in _var_inputs(node):
            v = item.arg.var
            if v not in tensors and v not in modules and v not in values and v not in passed:
                raise _error(rule, item.line, item.col,
                             f"{v} is a value the matched code passes in, and the target does not pass it on: the "
                             f"rewrite would drop it; pass {v} to the target")
        if node.kind == "layer" and node.callee.startswith("$") and node.callee not in passed and not rule.init_target:
            raise _error(rule, node.line, node.col,
                         f"{node.callee} is a module the source calls, and the target neither calls it, passes it "
                         f"on, nor rebuilds it in `init:`: the rewrite would drop its computation")


def _check_names(rule: Rule) -> None:
    known, extern = kinds(), set(rule.extern)
    constructors = [(node, True) for node in rule.init_source + rule.init_target]
    calls = [(node, False) for node in rule.forward_source + rule.forward_target]
    for node, constructs in constructors + calls:
        if node.kind != "layer" or node.callee.startswith("$"):
            continue
        for callee in node.callees:
            if callee in extern:
                continue
            if callee not in known:
                raise _error(rule, node.line, node.col, _unknown(callee, known, extern))
            if constructs and known[callee] != "module":
                raise _error(rule, node.line, node.col, _not_a_module(callee, known))


def _unknown(name: str, known: dict[str, str], extern: set[str]) -> str:
    declare = f"a name from another package is declared `extern: {name}`"
    packages = {n.split(".", 1)[0] for n in known}
    if "." in name and name.split(".", 1)[0] not in packages:
        listed = ", ".join(sorted(packages))
        return f"unknown name {name}: the catalogue (adopter/catalogue/) lists {listed} only; {declare}"
    guesses = _suggestions(name, known, extern)
    if not guesses:
        return f"unknown name {name}: not in the catalogue (adopter/catalogue/); {declare}"
    methods = "a tensor method is written `torch.Tensor.<method>`; " if guesses[0].startswith("torch.Tensor.") else ""
    return f"unknown name {name}: did you mean {' or '.join(guesses)}? ({methods}{declare})"


def _suggestions(name: str, known: dict[str, str], extern: set[str]) -> list[str]:
    """The names with the same last part (`torch.view` -> `torch.Tensor.view`), then close
    spellings (difflib), the closest first."""
    names = list(known) + sorted(extern)
    last = name.rsplit(".", 1)[-1].lower()
    def closeness(other: str) -> float:
        return difflib.SequenceMatcher(None, name, other).ratio()

    same_last = sorted((n for n in names if n.rsplit(".", 1)[-1].lower() == last), key=closeness, reverse=True)
    close = difflib.get_close_matches(name, names, n=3, cutoff=0.8)
    return list(dict.fromkeys(same_last + close))[:3]


def _not_a_module(name: str, known: dict[str, str]) -> str:
    kind = known[name]
    last = name.rsplit(".", 1)[-1].lower()
    modules = sorted(n for n, k in known.items() if k == "module" and n.rsplit(".", 1)[-1].lower() == last)
    instead = f"construct the module class instead (`{modules[0]}(...) -> $name`), or " if modules else ""
    article = "an" if kind[0] in "aeiou" else "a"
    return (f"{name} is {article} {kind}, not a module class: an `init:` node constructs a torch.nn.Module "
            f"subclass; {instead}call the {kind} in `forward:` (`{name}($x) -> $y`)")
