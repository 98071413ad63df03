"""A fusion that holds only on some paths (a rule with `fallback: eager`): the statements
from the first matched node to the last are kept as they are under
`if <a path where the match does not hold>:`, and the `else:` gets a copy of them with
the matched statements replaced by the rule's one-node target.

The range, the guard (when the original runs: a literal the fused copy needs fails, such
as the `if attention_mask is not None:` around a matched node, or every literal under
which a value the fusion removes is read elsewhere holds, such as `output_attentions`),
the `if` statements in the range the guard decides, and what the fused copy cannot keep
are the match's layout (datalog/match/layout.lp). This module only edits: in the fused copy
a decided `if` is replaced by the branch that runs; every other statement stays as it was.
The CST is read only at the reported positions and around them.
"""

from __future__ import annotations

import libcst as cst

from adopter.rewrite.conditions import disjunction
from adopter.rewrite.inputs import matched_input
from adopter.rewrite.kernel_sets import kernel_for
from adopter.rewrite.spans import OVERLAPS_FALLBACK, AlreadyRewritten, Unsafe

from adopter.rules.model import PatternNode

# `planner` below is plan.py's planner of one match (its match, rule, file context and
# edits); plan.py calls in here, so this module does not import it back.


def plan_guarded(planner, target: PatternNode) -> None:
    match, ctx, source = planner.match, planner.ctx, planner.rule.forward_source
    layout = match.layout
    if match.merged_reads:
        raise Unsafe("a value the fusion removes is also read outside the match on a path the guard cannot tell")
    expressions, lines, final = _matched_lines(planner)
    block, statements = _range(ctx, layout)
    _refuse_nested_rewrite(planner, statements)
    if layout.guard_always:
        raise Unsafe("the original code would run on every path (the guard is always true)")
    parts = disjunction(layout.guard)
    _check_stable(layout, ctx.line(statements[0]))
    call = _target_call(planner, target, source, expressions)
    _check_fused(layout)
    last_line = lines[final]  # its statement stays, with the target call in place of the last node
    replaced = last_line.deep_replace(expressions[final], call)
    folded = {id(line) for line in lines.values()}
    taken = {id(ctx.statement_at(b.line, b.col, "a decided `if`")): b.branch for b in layout.fused_branches}

    def fused(body) -> list[cst.BaseStatement]:
        out = []
        for statement in body:
            if statement is last_line:
                out.append(replaced.with_changes(leading_lines=[]))
            elif id(statement) in folded:
                continue
            elif id(statement) in taken:
                out += fused(_branch_taken(statement, taken[id(statement)]))
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


def _range(ctx, layout) -> tuple[cst.CSTNode, list]:
    """The innermost block holding every matched line (directly or inside `if`s), and its
    statements from the first holding one to the last, as the match's layout says."""
    if layout.guard_range is None:
        raise Unsafe("the matched statements are not in one block")
    line, col, last_line, last_col = layout.guard_range
    first = ctx.statement_at(line, col, "the first statement of the guarded range")
    last = ctx.statement_at(last_line, last_col, "the last statement of the guarded range")
    (block, start), (_, end) = ctx.position(first), ctx.position(last)
    return block, list(block.body[start:end + 1])


def _branch_taken(statement: cst.If, branch: str) -> list[cst.BaseStatement]:
    """The statements of an `if`'s branch ("body" or "orelse"; an `elif` is refused before)."""
    if branch == "body":
        return list(statement.body.body)
    return list(statement.orelse.body.body) if statement.orelse else []


def _check_fused(layout) -> None:
    """The first statement (in source order) the fused copy cannot keep, as the layout says."""
    if not layout.fused_conflicts:
        return
    conflict = layout.fused_conflicts[0]
    if conflict.kind == "elif":
        raise Unsafe(f"an `elif` at line {conflict.line} in the fused range; not rewritten")
    if conflict.kind == "holds":
        raise Unsafe(f"line {conflict.line} holds a matched node under a condition the match does not decide")
    raise Unsafe(f"line {conflict.line} uses `{conflict.name}`, which the fused code no longer computes")


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


def _check_stable(layout, start: int) -> None:
    """The guard evaluates every condition before the range: refuse if the function assigns
    a name a condition reads at or after the range's first line (the value could differ there)."""
    if layout.guard_unstable:
        raise Unsafe(f"`{layout.guard_unstable[0].name}` is assigned at or after line {start}, "
                     "so the guard could not test it first")


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
        for item in s.inputs:
            if item.arg.var and item.arg.var not in produced and item.arg.var not in external:
                if item.arg.var not in planner.ctors:
                    external[item.arg.var] = matched_input(expressions[i], item, s, planner.match.nodes[i])

    def input_value(var: str) -> cst.BaseExpression:
        if var not in external:
            raise Unsafe(f"{var} is not an input of the matched nodes")
        return external[var]

    args = planner.target_args(target, input_value)
    return cst.Call(func=planner.callee(target.callee), args=args)
