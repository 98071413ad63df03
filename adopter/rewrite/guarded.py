"""A fusion that holds only on some paths (a rule with `fallback: eager`): the statements
from the first matched node to the last are kept as they are under
`if <a path where the match does not hold>:`, and the `else:` gets a copy of them with
the matched statements replaced by the rule's one-node target.

The conditions come from the match: its own guard literals inside that range (the
`if attention_mask is not None:` around a matched node must hold) and `eager_when`, the
guard literals under which a value the fusion removes is read elsewhere (`output_attentions`,
`head_mask is not None`). In the fused copy an `if` whose test the guard has decided is
replaced by the branch that runs; every other statement stays as it was.

The CST is read only at the reported positions and around them (the enclosing block and
function), as in plan.py.
"""

from __future__ import annotations

import libcst as cst

from adopter.rewrite.adapters import code
from adopter.rewrite.conditions import Conditions, Literal, decided, simplify
from adopter.rewrite.inputs import TENSOR_METHOD, pattern_input
from adopter.rewrite.kernel_sets import kernel_for
from adopter.rewrite.spans import OVERLAPS_FALLBACK, AlreadyRewritten, Unsafe

from adopter.rules.model import PatternNode

# `planner` below is plan.py's planner of one match (its match, rule, file context and
# edits); plan.py calls in here, so this module does not import it back.


def plan_guarded(planner, target: PatternNode) -> None:
    match, ctx, source = planner.match, planner.ctx, planner.rule.forward_source
    if match.merged_reads:
        raise Unsafe("a value the fusion removes is also read outside the match on a path the guard cannot tell")
    expressions, lines, final = _matched_lines(planner)
    conditions = Conditions()
    block, statements, required = _range(ctx, conditions, match.layout)
    _refuse_nested_rewrite(planner, statements)

    # when the original must run: a required literal fails, or one read's literals all hold
    eager = [[(text, not holds)] for text, holds in sorted(required)]
    eager += [[conditions.literal(item.condition, item.holds) for item in read] for read in match.eager_when]
    alternatives = simplify(eager)
    if alternatives == [[]]:
        raise Unsafe("the original code would run on every path (the guard is always true)")
    parts = conditions.disjunction(alternatives)
    _check_stable(planner.match, conditions, ctx.line(statements[0]), alternatives)
    known: dict[str, bool] = {text: holds for text, holds in required}  # on the fused path
    known.update({conj[0][0]: not conj[0][1] for conj in alternatives if len(conj) == 1})

    call = _target_call(planner, target, source, expressions)
    last_line = lines[final]  # its statement stays, with the target call in place of the last node
    replaced = last_line.deep_replace(expressions[final], call)
    folded = {id(line) for line in lines.values()}
    removed = {line.body[0].targets[0].target.value for i, line in lines.items() if i != final}

    def fused(body) -> list[cst.BaseStatement]:
        out = []
        for statement in body:
            if statement is last_line:
                out.append(replaced.with_changes(leading_lines=[]))
            elif id(statement) in folded:
                continue
            elif isinstance(statement, cst.If) and decided(code(statement.test), known) is not None:
                out += fused(_branch_taken(ctx, statement, decided(code(statement.test), known)))
            elif _holds_any(statement, folded):
                raise Unsafe(f"line {ctx.line(statement)} holds a matched node under a condition the match "
                             "does not decide")
            elif _names(statement) & removed:
                name = sorted(_names(statement) & removed)[0]
                raise Unsafe(f"line {ctx.line(statement)} uses `{name}`, which the fused code no longer computes")
            else:
                out.append(statement)
        return out

    fused_body = fused(statements)
    if parts:
        if fused_body:
            fused_body[0] = fused_body[0].with_changes(leading_lines=[])
        replacement = [_if(parts, statements, fused_body)]
    else:  # nothing reads the removed values on any path: no fallback needed
        replacement = fused_body
        if replacement:
            replacement[0] = replacement[0].with_changes(leading_lines=statements[0].leading_lines)

    def edit(updated: cst.BaseSuite) -> cst.BaseSuite:
        body = list(updated.body)
        at = _find(body, statements)
        if at is None:
            raise Unsafe(f"{OVERLAPS_FALLBACK} (one of the two is left out)")
        return updated.with_changes(body=body[:at] + replacement + body[at + len(statements):])

    planner.plan.edits.at(ctx.key_of[id(block)]).fns.append(edit)


def _matched_lines(planner) -> tuple[list, dict[int, cst.SimpleStatementLine], int]:
    """Each matched node's expression, the statement of each node not nested in another,
    and the index of the last: every statement but the last's is `name = <node>`."""
    ctx, source, sites = planner.ctx, planner.rule.forward_source, planner.match.nodes
    planner.check_one_method()
    expressions = [ctx.nodes.get(planner.expression_key(p, s, f"node {i + 1}")) for i, (p, s) in enumerate(zip(source, sites))]
    lines = {i: ctx.statement_line(s.stmt, f"node {i + 1}'s statement") for i, s in enumerate(sites)
             if i not in planner.match.layout.nested}
    final = max(lines)
    for i, line in lines.items():
        small = line.body[0]
        if i != final and (len(line.body) != 1 or not isinstance(small, cst.Assign) or len(small.targets) != 1
                          or not isinstance(small.targets[0].target, cst.Name) or small.value is not expressions[i]):
            raise Unsafe(f"line {sites[i].span[0]} is not `name = <matched node>`, so it cannot be folded away")
    return expressions, lines, final


def _range(ctx, conditions: Conditions, layout) -> tuple[cst.CSTNode, list, set[Literal]]:
    """The innermost block holding every matched line (directly or inside `if`s), its
    statements from the first holding one to the last, and the literals of the `if`s passed
    on the way (the fused copy needs them to hold): the match's layout says which."""
    if layout.guard_range is None:
        raise Unsafe("the matched statements are not in one block")
    line, col, last_line, last_col = layout.guard_range
    first = ctx.statement_at(line, col, "the first statement of the guarded range")
    last = ctx.statement_at(last_line, last_col, "the last statement of the guarded range")
    (block, start), (_, end) = ctx.position(first), ctx.position(last)
    required = {conditions.literal(lit.condition, lit.holds) for lit in layout.guard_required}
    return block, list(block.body[start:end + 1]), required


def _branch_taken(ctx, statement: cst.If, test: bool) -> list[cst.BaseStatement]:
    """The statements of the branch that runs when an `if`'s test has the value `test`."""
    if test:
        return list(statement.body.body)
    if isinstance(statement.orelse, cst.If):
        raise Unsafe(f"an `elif` at line {ctx.line(statement.orelse)} in the fused range; not rewritten")
    return list(statement.orelse.body.body) if statement.orelse else []


def _if(parts: list[str], eager: list[cst.BaseStatement], fused: list[cst.BaseStatement]) -> cst.If:
    head = eager[0]
    eager = [head.with_changes(leading_lines=[]), *eager[1:]]
    test = " or ".join(parts)
    if len(test) > 80:  # one alternative per line, inside parentheses
        test = "(\n    " + "\n    or ".join(parts) + "\n)"
    template = cst.parse_statement(f"if {test}:\n    pass\nelse:\n    pass\n")
    return template.with_changes(body=cst.IndentedBlock(body=eager), leading_lines=head.leading_lines,
                                 orelse=cst.Else(body=cst.IndentedBlock(body=fused or [cst.SimpleStatementLine([cst.Pass()])])))


def _find(body: list, statements: list) -> int | None:
    n = len(statements)
    found = [i for i in range(len(body) - n + 1)
             if all(a.deep_equals(b) for a, b in zip(body[i:i + n], statements))]
    return found[0] if len(found) == 1 else None


def _names(statement: cst.CSTNode) -> set[str]:
    """Every plain name in a statement (read or written)."""
    found: set[str] = set()

    class Finder(cst.CSTVisitor):
        def visit_Name(self, node: cst.Name) -> None:
            found.add(node.value)

        def visit_Attribute(self, node: cst.Attribute) -> bool:
            node.value.visit(self)  # `x.attention_scores` names only `x`
            return False

    statement.visit(Finder())
    return found


def _holds_any(statement: cst.CSTNode, ids: set[int]) -> bool:
    found = []

    class Finder(cst.CSTVisitor):
        def on_visit(self, node) -> bool:
            if id(node) in ids:
                found.append(node)
            return not found

    statement.visit(Finder())
    return bool(found)


def _check_stable(match, conditions: Conditions, start: int, alternatives: list[list[Literal]]) -> None:
    """The guard evaluates every condition before the range: refuse if the function assigns
    a name a condition reads at or after the range's first line (the value could differ there)."""
    tested = {key for conj in alternatives for key, _ in conj}
    clash = sorted(d.name for d in match.layout.condition_defs
                   if d.line >= start and conditions.literal(d.condition, True)[0] in tested)
    if clash:
        raise Unsafe(f"`{clash[0]}` is assigned at or after line {start}, so the guard could not test it first")


def _refuse_nested_rewrite(planner, statements: list) -> None:
    """Applying twice must change nothing: a match inside the kept original of an earlier
    guarded rewrite (an `if` whose other branch calls the kernel) is left alone, and so are
    the other matches in its range (adopter/rewrite/patch.py), as on the first pass."""
    kernel = planner.rule.forward_target[0].callee
    if {kernel, kernel_for(kernel, planner.kernels)} & set(planner.match.layout.fallback_calls):
        lines = (planner.ctx.line(statements[0]), planner.ctx.key_of[id(statements[-1])][3])
        raise AlreadyRewritten("already rewritten: this is the original kept as the fallback of an earlier rewrite", lines)


def _target_call(planner, target: PatternNode, source, expressions) -> cst.Call:

    produced = {s.output for s in source}
    external: dict[str, cst.BaseExpression] = {}
    for i, s in enumerate(source):
        method = s.kind == "layer" and (s.callee or "").startswith(TENSOR_METHOD)
        for item in s.inputs:
            if item.arg.var and item.arg.var not in produced and item.arg.var not in external:
                if item.arg.var not in planner.ctors:
                    external[item.arg.var] = pattern_input(expressions[i], item, method)

    def input_value(var: str) -> cst.BaseExpression:
        if var not in external:
            raise Unsafe(f"{var} is not an input of the matched nodes")
        return external[var]

    args = planner.target_args(target, input_value)
    return cst.Call(func=planner.callee(target.callee), args=args)
