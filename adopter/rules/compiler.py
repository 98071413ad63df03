"""Compile a parsed rule into Datalog: the rule's candidates (checked by one program for all rules).

For a forward pattern of k nodes the generated program has
  `cand(m("<id>", Root, (X1..Xk,), (C1..Cm,)))`  nodes of the right types, connected by
                        data flow as the pattern's variables say, with constructors C1..Cm
                        matching the init pattern; found node by node through
                        `cand_part("<id>", I, Root, ...)`, the partial candidates of nodes 1..I;
  `pattern_edge("<id>", I, J)`, `guards_equal`, `fallback_eager`  facts about the pattern;
  `pattern_type(Type)` (or `pattern_any`)  the node types it names, for adopter/datalog/match/support.lp.
One program for all rules (`adopter/datalog/match/checks.lp`) keeps the candidates whose nodes
can share one path and whose intermediate values nothing else reads, as `match_node` etc.
Every question is answered by the analyses' relations (`adopter/datalog/`); this module only
writes the rule body. (A candidate check written out per rule would cost grounding time
per rule and file before any fact is read.)
"""

from __future__ import annotations

from dataclasses import dataclass, field

from adopter.catalogue import op_of, spellings_of
from adopter.rules.join_plan import binding_order, chain
from adopter.rules.model import Input, PatternNode, Rule
from adopter.rules.symmetry import ordered_pairs


def q(text: str) -> str:
    """`text` as a clingo string term: the only way rule text reaches a program."""
    if "\0" in text:
        raise ValueError("clingo strings cannot hold a NUL character")
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


@dataclass
class _Var:
    """Where a `$variable` is bound: a node's output, a constructor, or an input."""

    producer: int | None = None        # index of the forward node whose output it is
    ctor: int | None = None            # index of the init node it names
    uses: list = field(default_factory=list)       # (node index, Input) of forward inputs
    init_uses: list = field(default_factory=list)  # (init index, Input) of init inputs

    @property
    def external(self) -> bool:
        """An input of the matched code: no node of the pattern computes it, no constructor is it."""
        return self.producer is None and self.ctor is None


@dataclass
class Pattern:
    """A rule's patterns as the compiler reads them: its variables and where each is bound,
    the node and constructor variables of the candidate (X1.., C1..), the binary nodes, and
    the order the chain binds the nodes in."""

    rule: Rule
    variables: dict[str, _Var]
    xs: list[str]
    cs: list[str]
    ctor_index: dict[str, int]
    binary: list[int]
    order: list[int]

    @classmethod
    def of(cls, rule: Rule) -> "Pattern":
        fwd, init = rule.forward_source, rule.init_source
        variables: dict[str, _Var] = {}
        for i, node in enumerate(fwd):
            if node.output:
                variables.setdefault(node.output, _Var()).producer = i
            for item in node.inputs:
                if item.arg.var:
                    variables.setdefault(item.arg.var, _Var()).uses.append((i, item))
        for j, node in enumerate(init):
            variables.setdefault(node.output, _Var()).ctor = j
            for item in node.inputs:
                if item.arg.var:
                    variables.setdefault(item.arg.var, _Var()).init_uses.append((j, item))
        producers = [{variables[item.arg.var].producer for item in node.inputs
                      if item.arg.var and variables[item.arg.var].producer is not None} for node in fwd]
        return cls(rule, variables, [f"X{i + 1}" for i in range(len(fwd))], [f"C{j + 1}" for j in range(len(init))],
                   {node.output: j for j, node in enumerate(init)},
                   [i for i, node in enumerate(fwd) if node.kind == "binary"], binding_order(producers))

    def pos(self, i: int, item: Input) -> str:
        """The term of node i's input `item`: a binary node's operands are at Left/Right
        (support.lp's operand_order: as written, or swapped for a commutative operator)."""
        return (f"Left{i + 1}", f"Right{i + 1}")[item.position] if i in self.binary else _pos(item)

    def constant_literals(self) -> list[tuple[int, Input, str]]:
        """(node, input, literal): each forward input a constant must hold (not `kw!=value`), as
        body_literals writes it."""
        may = self.rule.detect_only
        return [(i, item, _input_literals(self.xs[i], self.pos(i, item), item, self.variables, self.xs, may=may)[0])
                for i, node in enumerate(self.rule.forward_source) for item in node.inputs
                if item.arg.const is not None and not item.negated]

    def types(self) -> list[str | None]:
        """The node types the pattern names (None: a wildcard), for match/support.lp."""
        return [t for node in self.rule.forward_source for t in self.node_types(node)]

    def node_types(self, node) -> list[str | None]:
        """The node types one pattern node stands for: its constructor's for `$layer(...)`, every
        spelling of the operations it names, its operator; [None] for a wildcard."""
        if node.kind == "layer" and node.callee.startswith("$"):
            return list(self.rule.init_source[self.ctor_index[node.callee]].callees)
        if node.kind == "layer":
            return spelled(node.callees)
        if node.kind in ("binary", "unary"):
            return [node.op]
        return [None]


def spelled(callees: tuple[str, ...]) -> list[str]:
    """The callees with every spelling of the canonical operations among them (the catalogue's
    ops/): a pattern node naming `torch.Tensor.softmax` matches `F.softmax(x)` too."""
    return sorted({s for c in callees for s in (spellings_of(op_of()[c]) if c in op_of() else (c,))})


def compile_rule(rule: Rule) -> str:
    """The Datalog program (text) finding one rule's candidates (`cand`) and its pattern facts:
    the pattern read (`Pattern`), its body literals, joined as a chain (adopter/rules/join_plan.py)."""
    pattern = Pattern.of(rule)
    name = q(rule.key)
    xs, cs = pattern.xs, pattern.cs
    # A candidate is one term, m(Rule, Root, Nodes, Ctors); the checks every candidate goes
    # through (feasibility, reads of intermediate values, guarded fallbacks) are the same for
    # all rules and live in adopter/datalog/match/checks.lp, fed by the facts below.
    nodes, ctors = f"({', '.join(xs)},)", f"({', '.join(cs)},)" if cs else "()"
    term = f"m({name}, R, {nodes}, {ctors})"
    lefts = [f"Left{i + 1}" for i in pattern.binary]
    head = f"cand_oriented({term}, ({', '.join(lefts)},))" if lefts else f"cand({term})"
    # (no path in this comment: a path is user text, and a newline in it would end the comment)
    body = body_literals(pattern)
    lines = [f"% rule {name}, generated by adopter/rules/compiler.py; checks: adopter/datalog/match/checks.lp",
             *chain(name, body, [xs[i] for i in pattern.order], cs, head, lefts),
             *pattern_facts(pattern), *explain_variants(pattern, body, term)]
    return "\n".join(lines) + "\n"


def explain_variants(pattern: Pattern, body: list[str], term: str) -> list[str]:
    """For `scan --explain` (checks.lp's `explain` part): the candidates that hold everything
    but one constant input of a forward node, `relaxed(M, c(Node, Pos, Wanted))` (a
    softmax over dim=1 where the rule needs -1, an F.normalize with p=1). Each is a chain of
    its own, under a name of its own; checks.lp runs it through the checks as a candidate
    that fails "constant"."""
    lines = []
    for k, (i, item, literal) in enumerate(pattern.constant_literals()):
        name = q(f"{pattern.rule.key}#const{k + 1}")
        relaxed = [f"not {literal}" if b == literal else b for b in body]
        head = f"relaxed({term}, c({i}, {_pos(item)}, {q(item.arg.const)}))"
        lines += chain(name, relaxed, [pattern.xs[j] for j in pattern.order], pattern.cs, head)
    return ["#program explain.", *lines, "#program base."] if lines else []


def body_literals(pattern: Pattern) -> list[str]:
    """The literals a candidate must satisfy: each node's type and inputs, each constructor's,
    the values its external inputs share, and the nodes' order."""
    rule, variables, xs, cs = pattern.rule, pattern.variables, pattern.xs, pattern.cs
    fwd, init = rule.forward_source, rule.init_source
    rank = {i: k for k, i in enumerate(pattern.order)}
    body = []
    # A node that reads a node bound before it in the chain is reached along that edge, its
    # first such input: `rule_edge(Xj, P, Xk, R, Kk)` (support.lp) is `input_from(Xk, P, Xj)`
    # joined with `rule_node_at(Xk, R, Kk)`, as one literal. clingo orders a body by guessing each
    # literal's size from its relation's size and arity, and for an operand edge (two unbound
    # arguments) it guessed the root's rule nodes smaller: every partial candidate was paired
    # with every rule node of its root and the pairs tested one by one, which grows with the
    # square of a method's length. One literal leaves it nothing else to start from.
    for i, node in enumerate(fwd):
        x = xs[i]
        edge, source = next(((item, p) for item in node.inputs
                             if (p := _edge_source(item, variables)) is not None and rank[p] < rank[i]), (None, None))
        if edge is None:
            body.append(f"rule_node_at({x}, R, K{i + 1})")  # a node of a rule root, and its key (support.lp)
        else:
            relation = "rule_reach" if edge.arg.reached else "rule_edge"
            body.append(f"{relation}({xs[source]}, {pattern.pos(i, edge)}, {x}, R, K{i + 1})")
        if node.kind == "layer" and node.callee.startswith("$"):
            j = pattern.ctor_index[node.callee]
            body.append(f"ctor({x}, O{j + 1}, {cs[j]})")
        elif node.kind == "layer" and all(c in op_of() for c in node.callees):
            # a spelling of a canonical operation stands for all of them (ops/canonical.lp)
            ops = sorted({op_of()[c] for c in node.callees})
            body.append(f"node_op({x}, ({';'.join(map(q, ops))}))")  # (its spellings' forms: canonical.lp's form_kind/2)
        elif node.kind == "layer" and any(c in op_of() for c in node.callees):
            # alternatives of both kinds: an operation (any spelling) or a type (canonical.lp's node_named)
            names = sorted({op_of().get(c, c) for c in node.callees})
            body.append(f"node_named({x}, ({';'.join(map(q, names))}))")
        elif node.kind == "layer":  # (alternatives `a|b` as a pool: one rule per type)
            body += [f"node_type({x}, ({';'.join(map(q, node.callees))}))", f"not node_kind({x}, op)"]
        elif node.kind in ("binary", "unary"):
            body += [f"node_kind({x}, op)", f"node_type({x}, {q(node.op)})"]
            if node.kind == "binary":
                body.append(f"operand_order({x}, Left{i + 1}, Right{i + 1})")
            if node.kind == "unary":
                body.append(f"not node_input({x}, 1, _, _)")
        for item in node.inputs:
            if item is not edge:
                body += _input_literals(x, pattern.pos(i, item), item, variables, xs, may=rule.detect_only)
    for j, node in enumerate(init):
        c = cs[j]
        relation = "wrapped_type" if node.wrapped else "value_type"  # (`~T()`: types/wrappers.lp)
        body.append(f"{relation}({c}, ({';'.join(map(q, node.callees))}))")  # (`a|b`: a pool, as above)
        for k, item in enumerate(node.inputs):
            at = _pos(item)
            if item.arg.const is not None or item.arg.code is not None:
                # `kw=value` holds where the argument may be value (a parameter's default too);
                # `kw!=value` where it is not written as value
                const = "ctor_const" if item.negated else "ctor_may_const"
                literal = (f"{const}({c}, {at}, {q(item.arg.const)})" if item.arg.const is not None
                           else f"ctor_text({c}, {at}, {q(item.arg.code)})")
                body.append(f"not {literal}" if item.negated else literal)
            else:
                body.append(f"ctor_arg({c}, {at}, _Arg{j + 1}_{k + 1})")  # named, not `_` (adopter/datalog/main.lp says why)
    body += _shared_values(pattern)
    # The written order means nothing: a node runs after the nodes whose outputs it reads (one
    # `Ki < Kj` per edge: node_key in adopter/datalog/match/support.lp is a function of the
    # node's site, so this also keeps them distinct, and a value carried around a loop is no
    # flow between two pattern nodes), and otherwise in any order. Interchangeable nodes (the
    # pattern's automorphisms: adopter/rules/symmetry.py) are ordered by where they run, which
    # finds each match once. Two nodes left unordered that could be one node (of one kind and
    # type) are kept distinct by `!=`: a chain has none, so the literals grow with the pattern's
    # edges, not with the square of its length. Constructors have no order: two `init:` nodes
    # are two objects.
    ordered = set(ordered_pairs(rule)) | set(pattern_edges(pattern))
    body += [f"K{i + 1} < K{j + 1}" for i, j in sorted(ordered)]
    before = precedence(len(fwd), ordered)
    body += [f"{xs[i]} != {xs[j]}" for j in range(len(fwd)) for i in range(j)
             if (i, j) not in before and (j, i) not in before and may_coincide(fwd[i], fwd[j])]
    body += [f"{a} != {b}" for k, a in enumerate(cs) for b in cs[k + 1:]]
    return body


def pattern_edges(pattern: Pattern) -> list[tuple[int, int]]:
    """(i, j): node j reads node i's output (also a part of it)."""
    return sorted({(info.producer, i) for info in pattern.variables.values() if info.producer is not None
                   for i, _item in info.uses if i != info.producer})


def precedence(n: int, ordered: set[tuple[int, int]]) -> set[tuple[int, int]]:
    """The transitive closure of `ordered`: (i, j) where node i runs before node j."""
    before = set(ordered)
    for k in range(n):
        before |= {(i, j) for i, kk in before if kk == k for kk2, j in before if kk2 == k}
    return before


def may_coincide(a: PatternNode, b: PatternNode) -> bool:
    """Two pattern nodes one DL node could stand for: of one kind, and for operators one operator."""
    if "wildcard" in (a.kind, b.kind):
        return True
    return a.kind == b.kind and (a.kind == "layer" or a.op == b.op)


def _shared_values(pattern: Pattern) -> list[str]:
    """One external variable used several times: all uses hold the same value (and, checked in
    checks.lp by shared_input/5, the same set of values: on every path); a part of it,
    `$x[:half]`, `$x[::2]` or `$x[..., 0]`, holds that part of the same value (support.lp's
    input_half/4, input_parity/4, input_item/4)."""
    xs, cs = pattern.xs, pattern.cs

    def value_literal(i: int, item: Input, v: str) -> str:
        if item.arg.part is not None:
            kind, which = item.arg.part
            return f"input_{kind}({xs[i]}, {pattern.pos(i, item)}, {which}, V_{v[1:]})"
        return f"input_value({xs[i]}, {pattern.pos(i, item)}, V_{v[1:]})"

    body = []
    for v, info in pattern.variables.items():
        if info.external:
            uses = info.uses
            for (i1, a), (i2, b) in zip(uses, uses[1:]):
                body.append(value_literal(i1, a, v))
                body.append(value_literal(i2, b, v))
            body += [value_literal(i, a, v) for i, a in uses if a.arg.part is not None]
            if info.init_uses and uses:
                (i1, a), (j1, b) = uses[0], info.init_uses[0]
                body += [f"input_text({xs[i1]}, {pattern.pos(i1, a)}, T_{v[1:]})", f"ctor_text({cs[j1]}, {_pos(b)}, T_{v[1:]})"]
            for (j1, a), (j2, b) in zip(info.init_uses, info.init_uses[1:]):
                body += [f"ctor_text({cs[j1]}, {_pos(a)}, T_{v[1:]})", f"ctor_text({cs[j2]}, {_pos(b)}, T_{v[1:]})"]
    return body


def pattern_facts(pattern: Pattern) -> list[str]:
    """The facts about the pattern that match/support.lp and match/checks.lp read."""
    rule, variables = pattern.rule, pattern.variables
    name, fwd, init = q(rule.key), rule.forward_source, rule.init_source
    lines = []
    # pattern_edge(Rule, I, J): node J reads node I's output (the values the fusion hides); a
    # read of parts of it (`$p[:half]`, `$p[::2]`) is not one: the code takes them, and they stay
    # pattern_reach_edge(Rule, I, J): ... through element-wise steps (`~$s`), which are the pattern's own
    for info in variables.values():
        if info.producer is not None:
            lines += [f"pattern_edge({name}, {info.producer}, {i})."
                      for i in sorted({i for i, item in info.uses if item.arg.part is None})]
            lines += [f"pattern_reach_edge({name}, {info.producer}, {i})."
                      for i in sorted({i for i, item in info.uses if item.arg.reached})]
    lines += sorted({f"wrap_asked({q(t)})." for node in init if node.wrapped for t in node.callees})
    lines += [f"pattern_kept({name}, {i})." for i in rule.kept_nodes]
    lines.append(f"rule_id({name}, {q(rule.id)}).")  # (shapes of one rule: checks.lp's subsumed/1)
    if rule.scope == "functions":  # (module-level functions nothing in their file runs are roots too)
        lines += ["module_roots_asked.", f"functions_scope({name})."]
    constants = {item.arg.const for node in fwd for item in node.inputs if item.arg.const is not None}
    lines += sorted(f"number_form({q(other)}, {q(const)})." for const in constants for other in _other_number_forms(const))
    if rule.detect_only and constants:
        lines.append("may_consts_asked.")
    lines += sorted({f"pattern_type({q(t)})." if t is not None else "pattern_any." for t in pattern.types()})
    for info in variables.values():
        if info.external:
            # (an operand's position depends on the match's orientation: binary nodes keep the
            # one-shared-value test of the body)
            for (i1, a), (i2, b) in zip(info.uses, info.uses[1:]):
                if i1 not in pattern.binary and i2 not in pattern.binary and a.arg.part is None and b.arg.part is None:
                    lines.append(f"shared_input({name}, {i1}, {_pos(a)}, {i2}, {_pos(b)}).")
    # the parts of inputs the pattern names: tuple elements at a position of a type, halves, alternate items
    kinds = {item.arg.part[0] for node in fwd for item in node.inputs if item.arg.part is not None}
    lines += [f"{asked}." for kind, asked in (("half", "halves_asked"), ("parity", "parities_asked"), ("item", "items_asked"))
              if kind in kinds]
    # the types of the nodes a `~$s` input reaches from: support.lp follows element-wise chains from them only
    reached = {variables[item.arg.var].producer for node in fwd for item in node.inputs
               if item.arg.reached and variables[item.arg.var].producer is not None}
    lines += sorted({f"reach_type({q(t)})." for i in reached for t in pattern.node_types(fwd[i]) if t is not None})
    for node in fwd:
        at = sorted({_pos(item, whole=True) for item in node.inputs if item.element is not None})
        callees = init[pattern.ctor_index[node.callee]].callees if node.callee and node.callee.startswith("$") else node.callees
        lines += [f"elements_asked({q(t)}, {p})." for t in spelled(callees) for p in at]
    if rule.guards == "equal":  # the layers the init part binds run exactly when each other do (else every node)
        lines.append(f"guards_equal({name}).")
        bound = [i for i, node in enumerate(fwd) if node.kind == "layer" and node.callee.startswith("$")]
        lines += [f"guards_equal_node({name}, {i})." for i in bound or range(len(fwd))]
    if rule.fallback == "eager":
        lines.append(f"fallback_eager({name}).")
    if rule.metadata == "allowed":
        lines.append(f"metadata_allowed({name}).")
    if rule.reads == "allowed":
        lines.append(f"reads_allowed({name}).")
    return lines


def _other_number_forms(const: str) -> list[str]:
    """The other way to write the number a rule's constant is (`2` and `2.0` are one number to
    a tensor operation's argument), as a literal's Python repr; [] for any other constant."""
    try:
        value = float(const)
    except ValueError:
        return []
    if not value.is_integer() or const in ("True", "False"):
        return []
    return [repr(float(value))] if "." not in const and "e" not in const else [repr(int(value))]


def _pos(item: Input, whole: bool = False) -> str:
    """The input's position as a term: an index, a keyword, or e(Position, Element) for an
    element of a tuple literal there (`whole`: the tuple's own position)."""
    at = str(item.position) if isinstance(item.position, int) else q(item.position)
    return at if item.element is None or whole else f"e({at}, {item.element})"


def _input_literals(x: str, pos: str, item: Input, variables: dict, xs: list[str], may: bool = False) -> list[str]:
    """The literals for one input of node `x`. `may`: a constant holds where the input may be it
    (a detect-only rule reports where its pattern may hold: a name that may be -1, a stored
    `functools.partial`'s keyword); a rewrite needs the literal itself."""
    if item.arg.const is not None or item.arg.code is not None:
        const = "input_may_const" if may and not item.negated else "input_const"
        literal = (f"{const}({x}, {pos}, {q(item.arg.const)})" if item.arg.const is not None
                   else f"input_text({x}, {pos}, {q(item.arg.code)})")
        return [f"not {literal}" if item.negated else literal]
    info = variables[item.arg.var]
    if info.producer is not None and item.arg.part is not None:  # `$p[:half]` of a node's output $p
        kind, which = item.arg.part
        return [f"input_{kind}({x}, {pos}, {which}, node({xs[info.producer]}))"]
    source = _edge_source(item, variables)
    if source is not None:
        return [f"{'input_reach' if item.arg.reached else 'input_from'}({x}, {pos}, {xs[source]})"]
    return [f"has_input({x}, {pos})"]


def _edge_source(item: Input, variables: dict) -> int | None:
    """The node whose whole output the input is (an `input_from` edge), else None."""
    if item.arg.var is None or item.arg.const is not None or item.arg.code is not None or item.arg.part is not None:
        return None
    return variables[item.arg.var].producer
