"""One match -> the edits that implement its rule's `source => target`.

Init part: a target construction with a source variable changes that construction (a
new type, keyword constants); a source construction the target neither keeps nor
passes on is removed when nothing else calls its object; a target construction with a
new variable becomes a new member, added after the constructions it replaces, under
their guards, with a fresh name.

Forward part: a target as long as the source substitutes node by node (new callee,
arguments through the kernel's adapter); a one-node target fuses the source: the last
source node's call becomes the target call, the other nodes disappear with it (nested
in it) or with their statements (`h = self.conv(x)`), which must come straight before
it. When that statement is before an `if` and the last node first in one branch, the
statement moves into the other branch (the paper's scope analysis, Fig. 4/5), so every
path computes what it did.

All program knowledge comes from the match (positions, bindings, other calls of each
constructed object); the CST is only read at the reported positions.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import libcst as cst

from adopter.records import MODULE_LEVEL, Match, NodeSite, is_nested
from adopter.catalogue import call_signature, constructors, op_of
from adopter.rewrite.adapters import CALL_ADAPTERS, CTOR_ADAPTERS, Construction, bind, code, source_signature
from adopter.rewrite.kernel_sets import PAPER, kernel_for, rule_kernels
from adopter.rewrite.context import FileContext
from adopter.rewrite.guarded import plan_guarded
from adopter.rewrite.inputs import TENSOR_METHOD, matched_input
from adopter.rewrite.spans import EditSet, Unsafe
from adopter.rules.model import PatternNode, Rule, oriented

KERNEL_HELPERS = "adopter_kernels.load_renamed"


@dataclass
class Plan:
    edits: EditSet = field(default_factory=EditSet)
    imports: set[str] = field(default_factory=set)  # qualified names the edits refer to


class Namer:
    """Fresh member names and local names for imported kernels, unique in the file."""

    def __init__(self, ctx: FileContext):
        self.taken = set(ctx.names)
        self.local = dict(ctx.imported)  # qualified name -> local name (or dotted, `F.gelu`)
        self.modules = ctx.modules  # module imported by `import m [as a]` -> how the file names it
        self.new_imports: dict[str, tuple[str, str, str | None]] = {}  # qname -> (module, name, asname)

    def fresh(self, base: str) -> str:
        name, n = base, 1
        while name in self.taken:
            name, n = f"{base}_{n}", n + 1
        self.taken.add(name)
        return name

    def imported(self, qname: str) -> str:
        """How the file names `qname`: by what it imports already (`from m import n`, or `m`
        itself: `import torch.nn.functional as F` gives `F.gelu`), else by a new import."""
        if qname not in self.local:
            module, name = qname.rsplit(".", 1)
            if module in self.modules:
                self.local[qname] = f"{self.modules[module]}.{name}"
                return self.local[qname]
            local = name if name not in self.taken else self.fresh(f"{module.split('.')[0]}_{name}")
            self.taken.add(local)
            self.local[qname] = local
            self.new_imports[qname] = (module, name, None if local == name else local)
        return self.local[qname]


# how a pattern writes a part of a value (rules/model.py's Arg.part)
_PART_TEXT = {("half", 0): "[:half]", ("half", 1): "[half:]", ("parity", 0): "[::2]", ("parity", 1): "[1::2]",
              ("item", 0): "[..., 0]", ("item", 1): "[..., 1]"}


def snake(name: str) -> str:
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name).lower()


def plan_match(match: Match, rule: Rule, ctx: FileContext, namer: Namer, kernels: str = PAPER,
               save_original_names: bool = False) -> Plan:
    check_rewritable(match, rule, kernels)
    rule = oriented(rule, match.swapped)  # positions as this match's operands are written
    planner = _Planner(match, rule, ctx, namer, kernels, save_original_names)
    planner.init_part()
    planner.forward_part()
    return planner.plan


def check_rewritable(match: Match, rule: Rule, kernels: str = PAPER) -> None:
    """Raise Unsafe for what refuses a match before its source is read: the rule, where the
    match is, how its objects are built, and a target the kernel set leaves out. (A file
    whose matches all stop here is not parsed.)"""
    if rule.detect_only:
        raise Unsafe("the rule is detect-only")
    # (the rewriter places and removes code by the pattern's order, types and reads)
    if not all(node.ordered for node in rule.forward_source):
        raise Unsafe("the rule leaves the order of its nodes open (`&`); such matches are found, not rewritten")
    several = [node for node in rule.forward_source if len(node.callees) > 1]
    # (a one-node fusion replaces the calls whatever their types, as long as each type is called
    # as `f(x, ...)`: `torch.nn.functional.silu|torch.nn.SiLU`, not a tensor method)
    fusion = (len(rule.forward_target) == 1 and rule.forward_target[0].output == rule.forward_source[-1].output
              and rule.fallback != "eager")
    if several and not (fusion and not any(c.startswith(TENSOR_METHOD) for node in several for c in node.callees)):
        raise Unsafe("the rule allows several types for a node (`a|b`); such matches are found, not rewritten")
    if rule.reads == "allowed":
        raise Unsafe("the rule lets the values it computes be read elsewhere (`reads: allowed`); "
                     "such matches are found, not rewritten")
    if rule.metadata == "allowed":
        raise Unsafe("the rule lets the values it hides be measured elsewhere (`metadata: allowed`); "
                     "such matches are found, not rewritten")
    module_level = [site.function for site in match.nodes if site.class_ == MODULE_LEVEL]
    if module_level and rule.scope == "methods":
        raise Unsafe(f"the match is in module-level function `{module_level[0]}`, which other code may call; "
                     "the rule's `scope: methods` leaves such functions alone")
    if match.inherited:
        base = match.nodes[0]
        raise Unsafe(f"{match.class_} runs the `{base.function}` it inherits from {base.class_}, "
                     "which other classes may share; such matches are found, not rewritten")
    if match.torchscript:
        raise Unsafe(f"the match is in `{match.torchscript}`, which `@torch.jit.script` compiles: a kernel called "
                     "there must compile as TorchScript too; such matches are found, not rewritten")
    if match.in_called_object:
        raise Unsafe(f"the match runs in {match.class_}.{match.function}, an object the module calls with "
                     "itself as an argument (`self.processor(self, ...)`); such matches are found, not rewritten")
    nested = [site.function for site in match.nodes if is_nested(site.function)]
    if nested:
        raise Unsafe(f"the match is in `{nested[0]}`, a function defined inside another; "
                     "such matches are found, not rewritten")
    elsewhere = [site for site in match.ctors if site.file]
    if elsewhere:
        raise Unsafe(f"{elsewhere[0].object} is built in {elsewhere[0].file} at line {elsewhere[0].span[0]}, "
                     "another file of the project; a rewrite that spans files is not made yet: found, not rewritten")
    chosen = [site for site in match.ctors if site.chosen]
    if chosen:
        raise Unsafe(f"{chosen[0].object} is built at line {chosen[0].span[0]} from a class chosen at run time; "
                     "only a construction that names its class is replaced")
    returned = [site for site in match.ctors if site.returned]
    if returned:
        raise Unsafe(f"{returned[0].object} is built at line {returned[0].span[0]} by a function that returns it; "
                     "such constructions are found, not rewritten")
    if match.layout is None:  # a caller's mistake, not the source's: the rewriter edits from the layout
        raise ValueError("the match carries no layout: scan with layout=True to rewrite it")
    rule_kernels(rule, kernels)  # (Unsafe where the set leaves a kernel out)


class _Planner:
    def __init__(self, match: Match, rule: Rule, ctx: FileContext, namer: Namer, kernels: str,
                 save_original_names: bool):
        self.match, self.rule, self.ctx, self.namer, self.kernels = match, rule, ctx, namer, kernels
        self.save_original_names = save_original_names
        self.plan = Plan()
        self.ctors = {c.var: c for c in match.ctors}
        self.source_type = {p.output: p.callee for p in rule.init_source}
        self.members: dict[str, str] = {}  # target variable -> new attribute name

    # --- names -----------------------------------------------------------------
    def qualified(self, qname: str) -> cst.BaseExpression:
        qname = kernel_for(qname, self.kernels)
        self.plan.imports.add(qname)
        return cst.parse_expression(self.namer.imported(qname))

    def callee(self, callee: str) -> cst.BaseExpression:
        return self.object(callee) if callee.startswith("$") else self.qualified(callee)

    def object(self, var: str) -> cst.BaseExpression:
        if var in self.members:
            return cst.parse_expression(f"self.{self.members[var]}")
        text = self.ctors[var].object
        if "*" in text or "?" in text:
            raise Unsafe(f"{var} is {text}, not one attribute")
        return cst.parse_expression(text)

    # --- init ------------------------------------------------------------------
    def ctor_call(self, var: str) -> cst.Call:
        site = self.ctors[var]
        if site.sequential:
            raise Unsafe(f"{site.object} is built inside nn.Sequential; such layers are not rewritten yet")
        node = self.ctx.nodes.get(self.ctx.key("Call", site.span))
        if not isinstance(node, cst.Call):
            raise Unsafe(f"the construction of {site.object} at line {site.span[0]} is not a call")
        return node

    def init_part(self) -> None:
        target_vars = {t.output for t in self.rule.init_target}
        passed_on = {i.arg.var for t in self.rule.init_target + self.rule.forward_target for i in t.inputs if i.arg.var}
        passed_on |= {t.callee for t in self.rule.forward_target if t.callee and t.callee.startswith("$")}
        # a node the rewrite leaves as it is still calls its layer
        passed_on |= {self.rule.forward_source[i].callee for i in self.rule.kept_nodes}
        new = [t for t in self.rule.init_target if t.output not in self.ctors]
        for t in new:
            self.members[t.output] = self.namer.fresh(snake(t.callee.rsplit(".", 1)[-1]))
        for t in self.rule.init_target:
            if t.output in self.ctors:
                self.modify_ctor(t)
        renamed = self.add_members(new)
        for var in self.ctors:
            if var not in target_vars and var not in passed_on and not self.remove_ctor(var) and var in renamed:
                raise Unsafe(f"{self.ctors[var].object} is used elsewhere (line "
                             f"{self.ctors[var].other_uses[0][0] if self.ctors[var].other_uses else '?'}), "
                             "so its parameters cannot move into the kernel")

    def modify_ctor(self, target: PatternNode) -> None:
        var = target.output
        changes_type = target.callee != self.source_type[var]
        keywords = []
        for item in target.inputs:
            if isinstance(item.position, int) or item.arg.const is None:
                raise Unsafe("a target construction may only set keyword constants")
            keywords.append((item.position, item.arg.const))
        if not changes_type and not keywords:
            return
        self.ctor_call(var)  # refuses a construction it cannot edit (inside nn.Sequential, not a call)
        func = self.qualified(target.callee) if changes_type else None

        def edit(node: cst.Call) -> cst.Call:
            args = list(node.args)
            for keyword, value in keywords:
                arg = cst.Arg(cst.parse_expression(value), keyword=cst.Name(keyword))
                at = [i for i, a in enumerate(args) if a.keyword is not None and a.keyword.value == keyword]
                if at:
                    args[at[0]] = args[at[0]].with_changes(value=arg.value)
                else:
                    if args:
                        args[-1] = args[-1].with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
                    args.append(arg)
            return node.with_changes(func=func or node.func, args=args)

        self.plan.edits.at(self.ctx.key("Call", self.ctors[var].span)).fns.append(edit)

    def remove_ctor(self, var: str) -> bool:
        """Remove `self.x = Ctor(...)` when nothing but the match calls `self.x`; False if kept."""
        site = self.ctors[var]
        if site.other_uses or site.sequential:
            return False
        if [c.var for c in self.match.ctors].index(var) not in self.match.layout.ctor_alone:
            return False
        line = self.ctx.nodes.get(self.ctx.key("SimpleStatementLine", site.stmt))
        if line is None:  # not a line of its own in the tree: kept
            return False
        self.plan.edits.at(self.ctx.key_of[id(line)]).remove = True
        return True

    def add_members(self, new: list[PatternNode]) -> set[str]:
        """Add the new constructions; the source variables whose parameters they take over."""
        renamed: set[str] = set()
        if not new:
            return renamed
        sites = list(self.ctors.values())
        if not sites:
            raise Unsafe("a new member needs the constructions it replaces")
        if len({(s.class_, s.function) for s in sites}) > 1:
            raise Unsafe("the constructions are in different methods")
        for s in sites:
            if s.sequential:
                raise Unsafe(f"{s.object} is built inside nn.Sequential; such layers are not rewritten yet")
        last = max(sites, key=lambda s: tuple(s.stmt[:2]))
        line = self.ctx.nodes.get(self.ctx.key("SimpleStatementLine", last.stmt))
        if not isinstance(line, cst.SimpleStatementLine):
            raise Unsafe(f"the construction at line {last.stmt[0]} shares its line with other statements")
        after = self.plan.edits.at(self.ctx.key_of[id(line)]).after
        for target in new:
            name = self.members[target.output]
            arguments, renames = self.member_arguments(target, name)
            kernel = code(self.qualified(target.callee))
            after.append(cst.parse_statement(f"self.{name} = {kernel}({arguments})\n"))
            if renames:
                hook = code(self.qualified(KERNEL_HELPERS))
                save = ", save_original=True" if self.save_original_names else ""
                after.append(cst.parse_statement(f"{hook}(self, {renames!r}{save})\n"))
                renamed |= {var for var in self.ctors
                            if any(old.startswith(self.ctors[var].object[len("self."):] + ".") for old in renames)}
        return renamed

    def member_arguments(self, target: PatternNode, name: str) -> tuple[str, dict[str, str]]:
        adapter = CTOR_ADAPTERS.get(target.callee)
        if adapter is not None:
            made = adapter({self.source_type[v]: Construction(self.ctor_call(v), self.ctors[v].object)
                            for v in self.ctors}, name)
            return made.arguments, made.renames
        parts = []
        for item in target.inputs:
            value = code(self.object(item.arg.var)) if item.arg.var else item.arg.const or item.arg.code
            parts.append(value if isinstance(item.position, int) else f"{item.position}={value}")
        return ", ".join(parts), {}

    # --- forward ---------------------------------------------------------------
    def forward_part(self) -> None:
        source, target = self.rule.forward_source, self.rule.forward_target
        if not target:
            return
        if self.rule.fallback == "eager":
            if len(target) != 1 or target[0].output != source[-1].output:
                raise Unsafe("`fallback: eager` needs a one-node target with the last node's output")
            plan_guarded(self, target[0])
        elif len(target) == len(source) and all(t.output == s.output for s, t in zip(source, target)):
            for i, (s, t) in enumerate(zip(source, target)):
                if s.callee != t.callee or s.inputs != t.inputs:
                    self.substitute(i, t)
        elif len(target) == 1 and target[0].output == source[-1].output:
            self.fuse(target[0])
        else:
            raise Unsafe("this shape of forward target is not supported by the rewriter")

    def node_call(self, i: int) -> cst.Call:
        site = self.match.nodes[i]
        if site.sequential:
            raise Unsafe("the match is inside nn.Sequential; such layers are not rewritten yet")
        node = self.ctx.nodes.get(self.ctx.key("Call", site.span))
        if not isinstance(node, cst.Call):
            raise Unsafe(f"the node at line {site.span[0]} is not a call")
        return node

    def substitute(self, i: int, target: PatternNode) -> None:
        site = self.match.nodes[i]
        original = self.node_call(i)
        func = self.callee(target.callee)
        adapter = CALL_ADAPTERS.get(target.callee)
        if adapter is None and target.inputs != self.rule.forward_source[i].inputs:
            raise Unsafe("a substituted node with other inputs needs a kernel adapter")
        built = self.built_arguments(original, site)
        signature = (call_signature(op_of().get(site.spelling, site.spelling)) if site.form == "layer"
                     else call_signature(site.spelling) if site.spelling
                     else source_signature(self.rule.forward_source[i].callees))
        if site.form == "layer" and adapter is None:
            raise Unsafe(f"`{code(original.func)}(...)` calls an object ({site.spelling}); its call is replaced "
                         "only through a kernel adapter, which binds the arguments it was built with")
        if adapter is not None:
            adapter(as_function(original, site, built), signature)  # refuses here, before any edit, if the arguments do not fit

        def edit(node: cst.Call) -> cst.Call:
            node = as_function(node, site, built)
            return node.with_changes(func=func, args=adapter(node, signature) if adapter else node.args)

        self.plan.edits.at(self.ctx.key("Call", self.match.nodes[i].span)).fns.append(edit)

    def built_arguments(self, call: cst.Call, site: NodeSite) -> list[cst.Arg]:
        """The arguments an object called by a node of an operation was built with, by name: a
        module class's constructor arguments (bound by the catalogue's signature), or a
        `functools.partial`'s keywords; none for a call of another form. Unsafe where the object
        may be built in more than one place, or its arguments cannot be read."""
        if site.form != "layer":
            return []
        if isinstance(call.func, cst.Call):  # `nn.Softmax(dim=-1)(x)`: built where it is called
            built = call.func
        else:
            if len(site.built) != 1:
                raise Unsafe(f"`{code(call.func)}(...)` calls an object ({site.spelling}) that may be built in "
                             f"{len(site.built) or 'no'} places; its arguments are not one set")
            built = self.ctx.nodes.get(self.ctx.key("Call", site.built[0]))
            if not isinstance(built, cst.Call):
                raise Unsafe(f"the object `{code(call.func)}` calls is not built by a call")
        if site.spelling in constructors():
            bound = bind(built, constructors()[site.spelling])
            return [cst.Arg(value, keyword=cst.Name(name)) for name, value in bound.items()]
        # a partial of the function: its keywords; positional arguments after the function would shift the call's
        if len(built.args) < 1 or any(a.keyword is None for a in built.args[1:]) or any(a.star for a in built.args):
            raise Unsafe(f"`{code(built)}` does not give its arguments by keyword")
        return [a.with_changes(comma=cst.MaybeSentinel.DEFAULT) for a in built.args[1:]]

    def fuse(self, target: PatternNode) -> None:
        source, sites = self.rule.forward_source, self.match.nodes
        if self.match.eager_when:  # the folded statements' values are still read on some paths
            when = " and ".join(f"{'' if l.holds else 'not '}{l.condition}" for l in self.match.eager_when[0])
            raise Unsafe(f"a value the fusion removes is also read when {when}; the rule has no `fallback: eager`")
        self.check_one_method()
        last = sites[-1]
        captured: dict[tuple[int, int | str, int | None], cst.BaseExpression] = {}
        # an input variable, or (variable, part) for a part (`$x[:half]` is not $x): where the
        # matched code passes it
        external: dict[str | tuple[str, tuple[str, int]], tuple[int, int | str, int | None]] = {}
        produced = {s.output for s in source}
        for i, s in enumerate(source):
            for item in s.inputs:
                # (an inlined node's inputs are not captured; a part of a node's output is the code's)
                if item.arg.var and (item.arg.var not in produced or item.arg.part is not None) \
                        and i not in self.match.layout.inlined:
                    key = item.arg.var if item.arg.part is None else (item.arg.var, item.arg.part)
                    external.setdefault(key, (i, item.position, item.element))
        last_line = self.ctx.statement_line(last.stmt, "the last node's statement")
        moved: list[cst.SimpleStatementLine] = []
        kept = self.rule.kept_nodes
        for i, (s, site) in enumerate(zip(source[:-1], sites[:-1])):
            if i in self.match.layout.inlined:  # in a function a call in the fused expression runs: dropped with it
                continue
            if i in kept:  # read only through halves the code takes: it stays
                if i in self.match.layout.nested:
                    raise Unsafe(f"node {i + 1}, whose halves the fusion passes on, is inside the fused expression")
                continue
            # Nested in another matched node (the last, or a folded statement's value,
            # e.g. `x.to(f).pow(2)` inside `.mean(...)`): captured where it stands.
            if i in self.match.layout.nested:
                self.plan.edits.at(self.expression_key(s, site, f"node {i + 1}")).fns.append(_capturer(i, s, site, captured))
                continue
            line = self.ctx.statement_line(site.stmt, f"node {i + 1}'s statement")
            if i in self.match.layout.fold_unfit:
                raise Unsafe(f"line {site.span[0]} is not `name = <call or operation>`, so it cannot be folded away")
            edit = self.plan.edits.at(self.ctx.key_of[id(line)])
            edit.fns.append(_statement_capturer(i, s, site, captured))
            edit.remove = True
            moved.append(line)
        self.check_adjacent(moved, last_line)
        func = self.callee(target.callee)
        last_pattern, n = source[-1], len(source) - 1

        def input_value(var: str | tuple[str, tuple[str, int]]) -> cst.BaseExpression:
            if var not in external or external[var] not in captured:
                name = var if isinstance(var, str) else var[0] + _PART_TEXT[var[1]]
                raise Unsafe(f"{name} is not an input of the matched nodes")
            return captured[external[var]]

        def replace(node: cst.Call | cst.BinaryOperation) -> cst.Call:
            _capture(n, last_pattern, last, node, captured)
            args = self.target_args(target, input_value)
            if isinstance(node, cst.BinaryOperation):  # a call needs no parentheses of its own
                return cst.Call(func=func, args=args)
            return cst.Call(func=func, args=args, lpar=node.lpar, rpar=node.rpar)

        self.plan.edits.at(self.expression_key(last_pattern, last, "the last node")).fns.append(replace)

    def target_args(self, target: PatternNode, input_value) -> list[cst.Arg]:
        """The arguments of a one-node target: constructed objects, `input_value(var)` for an
        input of the matched nodes, constants and source text as written."""
        args = []
        for item in target.inputs:
            var = item.arg.var
            if var and (var in self.members or var in self.ctors):
                value = self.object(var)
            elif var:
                value = input_value(var if item.arg.part is None else (var, item.arg.part))
            else:
                value = cst.parse_expression(item.arg.const or item.arg.code)
            if isinstance(item.position, int):
                args.append(cst.Arg(value))
            else:
                args.append(cst.Arg(value, keyword=cst.Name(item.position), equal=_TIGHT_EQUAL))
        return args

    def expression_key(self, pattern: PatternNode, site: NodeSite, what: str) -> tuple:
        """The edit key of a matched node's call or binary operation (refused when it is neither).
        A node of a canonical operation written as an operator (`x ** 2`, `x * x` for a pattern's
        `torch.Tensor.pow($x, 2)`) is an operation whatever kind the pattern's node is."""
        kind = "BinaryOperation" if site.form == "op" else _CST_KIND.get(pattern.kind)
        if kind is None or self.ctx.nodes.get(self.ctx.key(kind, site.span)) is None:
            raise Unsafe(f"{what} of the match (line {site.span[0]}) is not a call or an operation that can be edited")
        return self.ctx.key(kind, site.span)

    def check_one_method(self) -> None:
        """The matched nodes are calls in one method (not layers of an nn.Sequential, not in a helper)."""
        last = self.match.nodes[-1]
        for i, site in enumerate(self.match.nodes):
            if i in self.match.layout.inlined:
                continue
            if site.sequential:
                raise Unsafe("the match is inside nn.Sequential; such layers are not rewritten yet")
            if (site.class_, site.function) != (last.class_, last.function):
                raise Unsafe(f"the match spans {site.function} and {last.function}; "
                             "nodes in a helper method are not rewritten")

    def check_adjacent(self, moved: list[cst.SimpleStatementLine], last_line: cst.SimpleStatementLine) -> None:
        """Each folded statement comes straight before the next; the last node may be first
        in a branch of the `if` right after them, which then gets the other path."""
        layout = self.match.layout
        if layout.fold_gaps:
            first, second = layout.fold_gaps[0]
            raise Unsafe(f"statements between line {first} and line {second}: "
                         "only adjacent statements (or an `if` right after) are folded")
        if layout.fold_into:  # the `if` whose branch holds the last node's statement
            if layout.fold_elif:
                raise Unsafe("the other path is an `elif`; not rewritten")
            if_node, _ = self.ctx.branch_of[id(self.ctx.position(last_line)[0])]
            self.scope(moved, if_node, layout.fold_into)

    def scope(self, moved: list[cst.SimpleStatementLine], if_node: cst.If, which: str) -> None:

        moved = [line.with_changes(leading_lines=[]) for line in moved]

        def edit(node: cst.If) -> cst.If:
            if which == "orelse":
                return node.with_changes(body=node.body.with_changes(body=[*moved, *node.body.body]))
            if node.orelse is None:
                return node.with_changes(orelse=cst.Else(body=cst.IndentedBlock(body=list(moved))))
            block = node.orelse.body
            return node.with_changes(orelse=node.orelse.with_changes(body=block.with_changes(body=[*moved, *block.body])))

        self.plan.edits.at(self.ctx.key_of[id(if_node)]).fns.append(edit)


# The libcst node of each kind of pattern node, and the prefix of tensor-method node types.
_CST_KIND = {"layer": "Call", "binary": "BinaryOperation", "unary": "UnaryOperation"}
_TIGHT_EQUAL = cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace(""))


def as_function(call: cst.Call, site: NodeSite, built: list[cst.Arg] = ()) -> cst.Call:
    """A method call `x.f(a)` of a canonical operation as the function call `f(x, a)` its signature
    describes (the receiver is input 0); a call of an object, `self.attend(x)` with `self.attend =
    nn.Softmax(dim=-1)`, as its operation's function called with the arguments the object was
    built with, by name (`built`: `softmax(x, dim=-1)`); another call as it is."""
    if site.form == "layer":
        return call.with_changes(args=[*(a.with_changes(comma=cst.MaybeSentinel.DEFAULT) for a in call.args), *built])
    if site.form != "method":
        return call
    if not isinstance(call.func, cst.Attribute):
        raise Unsafe(f"`{code(call)}` is not a method call")
    # (a receiver that is an operation is parenthesised already: `(a + b).softmax(-1)`)
    return call.with_changes(args=[cst.Arg(call.func.value), *call.args])


def _capture(i: int, pattern: PatternNode, site: NodeSite, node: cst.CSTNode, captured: dict) -> None:
    # (a constant is the rule's, checked by the analysis: it may be a default or implied by the
    # spelling, `x.square()` for `pow(x, 2)`, with nothing in the source to read)
    for item in pattern.inputs:
        if item.arg.var is not None:
            captured[(i, item.position, item.element)] = matched_input(node, item, pattern, site)


def _capturer(i: int, pattern: PatternNode, site: NodeSite, captured: dict):
    def edit(node):
        _capture(i, pattern, site, node, captured)
        return node
    return edit


def _statement_capturer(i: int, pattern: PatternNode, site: NodeSite, captured: dict):
    def edit(line: cst.SimpleStatementLine):
        _capture(i, pattern, site, line.body[0].value, captured)
        return line
    return edit
