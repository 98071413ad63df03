"""Patch one file: plan every match, keep the ones that can be applied safely, apply them
together, add the imports they need, and check that the result parses.

A match whose plan raises `Unsafe`, or that conflicts with a match applied before it, is
refused with its reason and leaves the source untouched.
"""

from __future__ import annotations

import ast

import libcst as cst

from adopter.records import FilePatch, Match
from adopter.rewrite.context import FileContext
from adopter.rewrite.imports import add_imports
from adopter.rewrite.kernel_sets import PAPER
from adopter.rewrite.plan import Namer, Plan, check_rewritable, plan_match
from adopter.rewrite.spans import OVERLAPS_FALLBACK, AlreadyRewritten, EditSet, Unsafe, apply_edits
from adopter.rules.model import Rule


def patch_source(path: str, source: str, matches: list[Match], rules: dict[str, Rule],
                 kernels: str = PAPER, save_original_names: bool = False, package: str = "") -> FilePatch:
    """The file's patch (`package`: the top-level package the file belongs to, whose imports
    are the file's own, first-party ones, for where a new import goes)."""
    result = FilePatch(path, source, source)
    order = {id(match): index for index, match in enumerate(matches)}
    candidates = []
    for match in matches:
        try:
            check_rewritable(match, rules[match.rule_key], kernels)
        except Unsafe as reason:
            result.refused.append((match, str(reason)))
            continue
        candidates.append(match)
    if not candidates:  # every match is refused before its source is read: nothing to parse
        return result
    ctx = FileContext(path, source)
    namer = Namer(ctx)
    planned: list[tuple[Match, Plan]] = []
    kept_originals: list[tuple[int, int]] = []  # line ranges an earlier guarded rewrite kept as they were
    for match in candidates:
        try:
            plan = plan_match(match, rules[match.rule_key], ctx, namer, kernels, save_original_names)
        except Unsafe as reason:
            result.refused.append((match, str(reason)))
            if isinstance(reason, AlreadyRewritten):
                kept_originals.append(reason.lines)
            continue
        planned.append((match, plan))
    result.refused.sort(key=lambda refused: order[id(refused[0])])  # (in the matches' order, as one pass)
    # the first pass refused these as overlapping the guarded rewrite; so does every later one
    for match, plan in list(planned):
        if any(first <= site.span[0] and site.span[2] <= last
               for first, last in kept_originals for site in match.nodes):
            planned.remove((match, plan))
            result.refused.append((match, f"{OVERLAPS_FALLBACK} (applied already)"))
    planned = _one_fusion_per_node(planned, result)
    if not planned:  # nothing to edit: transforming the tree would only copy it
        return result
    kept, module = _together(ctx, planned, result)
    if not kept:
        return result
    module = _add_imports(module, namer, {q for _, plan in kept for q in plan.imports}, package)
    patched = module.code
    try:
        ast.parse(patched)
    except SyntaxError as error:  # a rewriter bug: refuse everything rather than emit it
        result.refused += [(m, f"the patched file would not parse: {error}") for m, _ in kept]
        return result
    result.patched = patched
    result.applied = [m for m, _ in kept]
    return result


def _one_fusion_per_node(planned: list[tuple[Match, Plan]], result: FilePatch) -> list[tuple[Match, Plan]]:
    """A source node is fused by one match at most: where two planned matches share a node
    (bias_gelu's `act(gate(x))` inside swiglu's `act(gate(x)) * up(x)`), the one with more
    nodes is kept (the earlier one, on a tie) and the other refused. Without this, the outer
    rewrite rebuilds its call from its inputs and the inner edit is lost, though counted."""
    order = sorted(range(len(planned)), key=lambda i: (-len(planned[i][0].nodes), i))
    owner: dict[tuple, Match] = {}
    dropped: set[int] = set()
    for i in order:
        match = planned[i][0]
        inlined = match.layout.inlined if match.layout is not None else []
        # (the nodes of a function a call in the match runs, `rotate_half`, are left as they are)
        spans = [tuple(site.span) for k, site in enumerate(match.nodes) if k not in inlined]
        taken = next((owner[span] for span in spans if span in owner), None)
        if taken is not None:
            dropped.add(i)
            result.refused.append((match, f"it shares nodes with the {taken.rule} match at line {taken.line}, "
                                          "which fuses more of them (or comes first)"))
            continue
        owner.update(dict.fromkeys(spans, match))
    return [p for i, p in enumerate(planned) if i not in dropped]


def _together(ctx: FileContext, planned: list[tuple[Match, Plan]], result: FilePatch):
    """The plans that apply together; when they do not, add them one at a time, so that
    the refusal names the match that cannot be applied."""
    edits = EditSet()
    for _, plan in planned:
        edits.extend(plan.edits)
    try:
        return planned, apply_edits(ctx.wrapper, edits)
    except Unsafe:
        pass
    kept: list[tuple[Match, Plan]] = []
    module = None
    edits = EditSet()
    for match, plan in planned:
        trial = EditSet()
        trial.extend(edits)
        trial.extend(plan.edits)
        try:
            module = apply_edits(ctx.wrapper, trial)
        except Unsafe as reason:
            result.refused.append((match, str(reason)))
            continue
        edits = trial
        kept.append((match, plan))
    return kept, module


def _add_imports(module: cst.Module, namer: Namer, qnames: set[str], package: str) -> cst.Module:
    """`from m import n [as a]` for each new name, where isort would put it (imports.py)."""
    needed = [namer.new_imports[q] for q in sorted(qnames) if q in namer.new_imports]
    return add_imports(module, needed, package)
