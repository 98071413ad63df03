"""Matches of one file: the compiled rules run on the file's facts in Datalog, and each
match becomes a `Match` record (adopter/records.py).

A location is (rule, file, class, line); a match reached through several roots or paths
is reported once.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from functools import cached_property

import clingo

from adopter.records import (LOCALS, MODULE_LEVEL, CtorSite, Diagnostic, FusedBranch, FusedConflict, Layout, LentCtor, Literal, Match, NearMiss,
                              NodeSite, UnstableName)
from adopter.datalog.engine import MAIN_PROGRAM, MATCH_PROGRAMS, solve
from adopter.extract.coverage import category
from adopter.extract.python_facts import FileFacts
from adopter.rules.compiler import compile_rule
from adopter.rules.model import Rule, oriented

REPORTED = {"report_root_rank", "match_node", "match_ctor", "match_eager", "match_merged", "report_site", "report_spelling", "report_node_ctor", "report_lit", "report_path_cut", "report_lifted", "report_out", "report_input",
             "report_seq_ctor", "report_seq_builder", "report_obj", "report_other_use", "report_ctor_chosen", "report_ctor_returned", "report_in_called_object", "report_scripted", "report_orientation", "report_unmodelled", "report_nested", "report_inlined", "report_fold_gap",
            "report_fold_unfit", "report_ctor_alone", "report_fold_into", "report_fold_elif", "report_fallback_call", "report_guard_range", "report_guard_alt",
            "report_guard_always", "report_fused_branch", "report_fused_conflict", "report_guard_unstable", "report_near_miss"}


class _Positions:
    """Positions, functions and classes of one file's expressions, from its facts.

    Each table is built on first use: most files report no match and no warning, and
    indexing every expression of a file costs about as much as reading back its matches."""

    def __init__(self, facts: FileFacts):
        self._rows = facts.rows
        self._lent = facts.lent  # (a negative id: a construction in another file of the project)

    @cached_property
    def expr(self) -> dict[int, tuple]:
        return {row[0]: row for row in self._rows["expr"]}  # expr, stmt, kind, line, col, end_line, end_col

    @cached_property
    def stmt_function(self) -> dict[int, int]:
        return {row[0]: row[1] for row in self._rows["stmt"]}

    @cached_property
    def function_name(self) -> dict[int, str]:
        return {row[0]: row[1] for row in self._rows["function_def"]}

    @cached_property
    def function_class(self) -> dict[int, int]:
        return dict(self._rows["function_class"])

    @cached_property
    def class_name(self) -> dict[int, str]:
        return {row[0]: row[1] for row in self._rows["class_def"]}

    @cached_property
    def stmt_span(self) -> dict[int, tuple]:
        return {row[0]: tuple(row[3:7]) for row in self._rows["stmt"]}

    @cached_property
    def defined_in(self) -> dict[int, int]:
        """A function defined by a def inside another: the function holding that def."""
        return {function: self.stmt_function[stmt] for function, stmt in self._rows["nested_function"]}

    def span(self, expr: int) -> tuple[int, int, int, int]:
        if expr < 0:
            return tuple(self._lent[expr].span)
        row = self.expr[expr]
        return row[3], row[4], row[5], row[6]

    def site(self, expr: int) -> dict:
        """Where an expression is, for the rewriter: its span, its statement's span, its function."""
        if expr < 0:
            lent = self._lent[expr]
            return {"span": list(lent.span), "stmt": list(lent.stmt), "function": lent.function, "class_": lent.class_}
        row = self.expr[expr]
        cls, function = self.owner(expr)
        return {"span": list(row[3:7]), "stmt": list(self.stmt_span.get(row[1], (0, 0, 0, 0))),
                "function": function, "class_": cls}

    def file(self, expr: int) -> str:
        """The other file of the project an expression is in ("": this one)."""
        return self._lent[expr].file if expr < 0 else ""

    def owner(self, expr: int) -> tuple[str, str]:
        """(class, function) holding the expression."""
        return self.function_owner(self.stmt_function.get(self.expr[expr][1], 0))

    def function_owner(self, function: int) -> tuple[str, str]:
        """(class, name) of a function; a nested one is named as Python's `__qualname__`
        does (`forward.<locals>.shape`), with the class of the method it is defined in."""
        name = self.function_name.get(function, "-")
        while function in self.defined_in:
            function = self.defined_in[function]
            name = f"{self.function_name.get(function, '-')}{LOCALS}{name}"
        return self.class_name.get(self.function_class.get(function), MODULE_LEVEL), name


def rules_program(rules: list[Rule]) -> str:
    return "\n".join(compile_rule(rule) for rule in rules)


# The program part of match/layout.lp: what the rewriter needs of the statements around
# each match. Grounded only when asked (`apply`): a scan's output does not show it.
LAYOUT_PART = ("match_layout", [])
# The program part of match/checks.lp that finds the candidates failing one check (`scan --explain`).
EXPLAIN_PART = ("explain", [])


def scan_facts(facts: FileFacts, rules: list[Rule], program: str | None = None, layout: bool = False) -> list[Match]:
    """All matches of `rules` in one file's facts (with each one's `layout` when asked)."""
    model = solve(facts, extra_program=program if program is not None else rules_program(rules),
                  parts=[LAYOUT_PART] if layout else [], programs=(MAIN_PROGRAM, *MATCH_PROGRAMS), keep=REPORTED)
    return matches_from_model(model, facts, rules, layout)


def matches_from_model(model, facts: FileFacts, rules: list[Rule], layout: bool = False) -> list[Match]:
    """Turn the reported relations of a solved model into one `Match` per location; with
    `layout`, the model has the LAYOUT_PART's relations and each match carries them."""
    by_key = {rule.key: rule for rule in rules}
    pos = _Positions(facts)
    site, seq_places, outs, inputs, objects, spelled, built_by = _node_reports(model)
    lits: dict = {}
    for x, text, polarity in model.get("report_lit"):
        lits.setdefault(x, set()).add((text.string, polarity.name == "pos"))
    cut = {x for (x,) in model.get("report_path_cut")}
    chosen = {c.number for (c,) in model.get("report_ctor_chosen")}
    returned = {c.number for (c,) in model.get("report_ctor_returned")}
    in_object = {(name.string, root, nodes, ctors) for name, root, nodes, ctors in model.get("report_in_called_object")}
    scripted = {(name.string, root, nodes, ctors): function.string
                for name, root, nodes, ctors, function in model.get("report_scripted")}
    # (two orientations can both hold, `h + h`: the one as written first)
    lefts: dict[tuple, list[int]] = {}
    for name, root, nodes, ctors, ls in sorted(model.get("report_orientation"), key=lambda row: [str(p) for p in row]):
        lefts.setdefault((name.string, root, nodes, ctors), [left.number for left in ls.arguments])
    other_uses: dict[tuple, set[int]] = {}  # (match key, constructor index) -> expressions
    for name, root, nodes, ctors, index, e in model.get("report_other_use"):
        other_uses.setdefault(((name.string, root, nodes, ctors), index.number), set()).add(e.number)
    groups: dict[tuple, dict] = {}
    for name, root, nodes, ctors, index, node in model.get("match_node"):
        groups.setdefault((name.string, root, nodes, ctors), {"nodes": {}, "ctors": {}})["nodes"][index.number] = node
    for name, root, nodes, ctors, index, ctor in model.get("match_ctor"):
        groups.setdefault((name.string, root, nodes, ctors), {"nodes": {}, "ctors": {}})["ctors"][index.number] = ctor.number
    eager: dict[tuple, dict] = {}
    for name, root, nodes, ctors, read, text, polarity in model.get("match_eager"):
        reads = eager.setdefault((name.string, root, nodes, ctors), {})
        reads.setdefault(read, set()).add((text.string, polarity.name == "pos"))
    lifted: dict[tuple, dict] = {}  # (match key) -> {node: the call in the last node's function that runs it}
    for name, root, nodes, ctors, node, call in model.get("report_lifted"):
        lifted.setdefault((name.string, root, nodes, ctors), {})[node] = call.number
    merged = Counter((name.string, root, nodes, ctors) for name, root, nodes, ctors, _ in model.get("match_merged"))
    layouts = _layouts(model, eager) if layout else {}
    found: dict[tuple, Match] = {}
    # several candidates can sit at one location (a helper inlined from two call sites, two
    # shapes of one rule, a Sequential's layers run where it is built and where forward calls it):
    # keep one that a rewrite can use (a shape with a target before a detect-only one), one found
    # in a forward (which sees every read) before one found elsewhere (report_root_rank), then
    # the first by their text, so the choice depends neither on the order in which the grounder
    # derived them nor on clingo's term order (which follows interning order)
    rank = {root: n.number for root, n in model.get("report_root_rank")}
    for key, group in sorted(groups.items(), key=lambda item: (by_key[item[0][0]].detect_only,
                                                               rank.get(item[0][1], 0),
                                                               [str(part) for part in item[0]])):
        binary = [i for i, node in enumerate(by_key[key[0]].forward_source) if node.kind == "binary"]
        swapped = [i for i, left in zip(binary, lefts.get(key, []), strict=False) if left == 1]
        rule = oriented(by_key[key[0]], swapped)
        nodes = [group["nodes"][i] for i in sorted(group["nodes"])]
        ctors = [group["ctors"][j] for j in sorted(group["ctors"])]
        uses = [other_uses.get((key, j), set()) for j in sorted(group["ctors"])]
        match = _build_match(rule, facts.path, pos, nodes, ctors, site, seq_places, outs, inputs, lits, objects, uses, cut,
                             lifted.get(key, {}), spelled, built_by)
        if key[1].name == "u":  # a subclass's root, running its base's forward: the match is the subclass's
            match.class_ = pos.class_name[key[1].arguments[1].number]
            match.inherited = True
        match.in_called_object = key in in_object
        match.torchscript = scripted.get(key, "")
        for ctor_site, ctor in zip(match.ctors, ctors, strict=True):
            ctor_site.chosen = ctor in chosen
            ctor_site.returned = ctor in returned
        match.eager_when = _alternatives(eager.get(key, {}).values())
        match.merged_reads = merged.get(key, 0)
        match.layout = layouts.get(key, Layout()) if layout else None
        match.swapped = swapped
        found.setdefault(match.location, match)
    return sorted(found.values(), key=lambda m: (m.line, m.rule))


def _node_reports(model) -> tuple[dict, tuple[dict, dict], dict, dict, dict, dict, dict]:
    """What report.lp says of the reported nodes and constructors: sites, Sequential
    constructors (and the builder calls that build some), output names, input texts,
    constructed objects, spellings of operations, the constructions of called objects."""
    site = {x: e.number for x, _, e in model.get("report_site")}
    seq_ctor = {x: c.number for x, c in model.get("report_seq_ctor")}
    builders = {x: e.number for x, e in model.get("report_seq_builder")}
    outs = {x: v.string for x, v in model.get("report_out")}
    inputs = {(x, str(p).strip('"')): t.string for x, p, t in model.get("report_input")}
    objects = {c.number: o for c, o in model.get("report_obj")}
    spelled = {x: (t.string, k.name) for x, t, k in model.get("report_spelling")}
    built_by: dict = {}
    for x, c in model.get("report_node_ctor"):
        built_by.setdefault(x, set()).add(c.number)
    return site, (seq_ctor, builders), outs, inputs, objects, spelled, built_by


# what the whole-project analysis reads back of every file (project/exports.lp, project/entries.lp)
PROJECT = {"export_attr", "import_wanted", "import_name", "entry_candidate"}


def project_from_model(model, facts: FileFacts) -> tuple[list[LentCtor], list[str], list[str], list[str]]:
    """What the other files of a file's project need of its analysis: what it lends them (each
    class's attributes and the constructions that may build them, also those lent to it in
    turn), the classes it names as bases and does not define (which another file may lend it),
    the globals it imports by name, and its globals that are roots if another file imports them."""
    lends, wants = _lends(model, facts)
    return (lends, wants, sorted({q.string for (q,) in model.get("import_name")}),
            sorted({q.string for (q,) in model.get("entry_candidate")}))


def _lends(model, facts: FileFacts) -> tuple[list[LentCtor], list[str]]:
    pos = _Positions(facts)
    lends = {}
    for qname, attr, kind, ctor in model.get("export_attr"):
        if ctor.number < 0:  # lent to this file: passed on, as the attribute of this class
            lent = replace(facts.lent[ctor.number], qname=qname.string, attr=attr.string)
        else:
            lent = LentCtor(qname.string, attr.string, kind.string, facts.path, **pos.site(ctor.number))
        lends[lent.qname, lent.attr, lent.type, lent.file, *lent.span] = lent
    return [lends[key] for key in sorted(lends)], sorted({q.string for (q,) in model.get("import_wanted")})


def near_misses_from_model(model, facts: FileFacts, rules: list[Rule], matches: list[Match]) -> list[NearMiss]:
    """One `NearMiss` per location of a candidate that fails exactly one check (the model has
    EXPLAIN_PART's relations); a location one of `matches` holds is left out."""
    by_key = {rule.key: rule for rule in rules}
    pos = _Positions(facts)
    site, seq_places, outs, inputs, objects, spelled, built_by = _node_reports(model)
    matched = {m.location for m in matches}
    found: dict[tuple, NearMiss] = {}
    for name, root, nodes, ctors, check, text, expr in sorted(model.get("report_near_miss"), key=lambda row: [str(p) for p in row]):
        rule = by_key[name.string]
        node_ids, ctor_ids = list(nodes.arguments), [c.number for c in ctors.arguments]
        where = _build_match(rule, facts.path, pos, node_ids, ctor_ids, site, seq_places, outs, inputs, {}, objects,
                             [set() for _ in ctor_ids], set(), {}, spelled, built_by)  # (a near miss reports no guard path, lifts no node)
        miss = NearMiss(rule=rule.id, file=facts.path, line=where.line, col=where.col, function=where.function,
                        class_=where.class_, check=check.string, detail=text.string,
                        detail_line=pos.span(expr.number)[0] if expr.number else 0)
        if miss.location not in matched:
            found.setdefault(miss.location, miss)
    return sorted(found.values(), key=lambda m: (m.line, m.rule))


def _layouts(model, eager: dict[tuple, dict]) -> dict[tuple, Layout]:
    """Each match's statements as the rewriter needs them (datalog/match/layout.lp); `eager`
    holds each match's reads of removed values and their literals, which order its guard."""
    layouts: dict[tuple, Layout] = {}

    def layout(name, root, nodes, ctors) -> Layout:
        return layouts.setdefault((name.string, root, nodes, ctors), Layout())

    for *key, index in model.get("report_nested"):
        layout(*key).nested.append(index.number)
    for *key, index in model.get("report_inlined"):
        layout(*key).inlined.append(index.number)
    for *key, line, line2 in model.get("report_fold_gap"):
        layout(*key).fold_gaps.append([line.number, line2.number])
    for *key, index, _line in model.get("report_fold_unfit"):
        layout(*key).fold_unfit.append(index.number)
    for *key, index in model.get("report_ctor_alone"):
        layout(*key).ctor_alone.append(index.number)
    for key in model.get("report_fold_elif"):
        layout(*key).fold_elif = True
    for *key, branch in model.get("report_fold_into"):
        layout(*key).fold_into = branch.string
    for *key, qname in model.get("report_fallback_call"):
        layout(*key).fallback_calls.append(qname.string)
    for *key, line, col, line2, col2 in model.get("report_guard_range"):
        layout(*key).guard_range = [line.number, col.number, line2.number, col2.number]
    alternatives: dict[tuple, dict] = {}  # match key -> alternative -> its literals
    for name, root, nodes, ctors, alternative, text, polarity in model.get("report_guard_alt"):
        literals = alternatives.setdefault((name.string, root, nodes, ctors), {}).setdefault(alternative, set())
        literals.add((text.string, polarity.name == "pos"))
    for key, found in alternatives.items():
        layouts.setdefault(key, Layout()).guard = _guard_order(found, eager.get(key, {}))
    for key in model.get("report_guard_always"):
        layout(*key).guard_always = True
    for *key, line, col, branch in model.get("report_fused_branch"):
        layout(*key).fused_branches.append(FusedBranch(line.number, col.number, branch.string))
    for *key, line, kind, name in model.get("report_fused_conflict"):
        layout(*key).fused_conflicts.append(FusedConflict(line.number, kind.name, name.string))
    for *key, name, line in model.get("report_guard_unstable"):
        layout(*key).guard_unstable.append(UnstableName(name.string, line.number))
    for found in layouts.values():  # in a stable order, whatever the grounder's
        found.nested.sort()
        found.inlined.sort()
        found.fold_unfit.sort()
        found.ctor_alone.sort()
        found.fold_gaps.sort()
        found.fallback_calls.sort()
        found.fused_branches.sort(key=lambda b: (b.line, b.col))
        found.fused_conflicts.sort(key=lambda c: (c.line, c.kind, c.name))
        found.guard_unstable.sort(key=lambda u: (u.name, u.line))
    return layouts


def unmodelled_warnings(model, facts: FileFacts) -> list[Diagnostic]:
    """One warning per (function, construct) where a rule candidate was excluded because the
    function holds a construct the extractor does not model (`report_unmodelled`)."""
    pos = _Positions(facts)
    warnings = []
    for function, kind, line in sorted(model.get("report_unmodelled"), key=lambda row: (row[2].number, row[1].string)):
        cls, name = pos.function_owner(function.number)
        where = name if cls == MODULE_LEVEL else f"{cls}.{name}"
        warnings.append(Diagnostic(facts.path, line.number, None,
                                   f"`{kind.string}` {category(kind.string)} not modelled: no rewrite in {where}", "warning"))
    return warnings


def _guard_order(alternatives: dict, eager: dict) -> list[list[Literal]]:
    """A guard's alternatives in the order they are written: shortest first; of equal length,
    a required literal's (by its text) before a read's (in `eager_when` order, by the read's
    own literals, `eager`), each conjunction's literals by text."""

    def origin(alternative) -> tuple:
        if alternative.type == clingo.SymbolType.Function and alternative.name == "req":
            text, polarity = alternative.arguments
            return (0, text.string, polarity.name == "pos")
        literals = sorted(eager.get(alternative, []))
        return (1, len(literals), literals)

    ordered = sorted(alternatives.items(), key=lambda item: (len(item[1]), origin(item[0])))
    return [[Literal(text, holds) for text, holds in sorted(literals)] for _, literals in ordered]


def _alternatives(reads) -> list[list[Literal]]:
    """One list of literals per read (all hold when it happens), shortest first; the reads
    another read's literals cover are left out by Datalog (`eager_absorbed`)."""
    ordered = sorted((sorted(literals) for literals in reads), key=lambda literals: (len(literals), literals))
    return [[Literal(text, holds) for text, holds in literals] for literals in ordered]


def _anchor_expr(node, site: dict, seq_ctor: dict) -> int:
    """A node's own expression: a Sequential layer is anchored at its constructor."""
    return seq_ctor.get(node, site[node])


def _build_match(rule, path, pos, nodes, ctors, site, seq_places, outs, inputs, lits, objects, uses, cut,
                 lifted: dict, spelled: dict, built_by: dict) -> Match:
    seq_ctor, builders = seq_places
    ctor_of = {p.output: c for p, c in zip(rule.init_source, ctors)}
    # a Sequential layer is anchored at its constructor: the one the match linked, if any; or,
    # where a builder builds it, at the Sequential's element that calls the builder
    anchors = [builders[n] if n in builders else
               ctor_of[p.callee] if n in seq_ctor and p.callee in ctor_of else _anchor_expr(n, site, seq_ctor)
               for n, p in zip(nodes, rule.forward_source)]
    # (a node the rewrite keeps, read only through halves, is not where the fusion is)
    kept = rule.kept_nodes
    # (a node that runs in a helper is reported at the call of it in the last node's function)
    first = ctors[0] if rule.anchor == "init" and ctors[0] >= 0 else next(lifted.get(n, a) for i, (n, a) in enumerate(zip(nodes, anchors))
                                                          if i not in kept)
    line, col, _, _ = pos.span(first)
    cls, function = pos.owner(first)
    end_line = max(pos.span(a)[2] for a in anchors)
    end_col = max((pos.span(a)[2], pos.span(a)[3]) for a in anchors)[1]
    bindings: dict[str, str] = {}
    for node, pattern in zip(nodes, rule.forward_source):
        if pattern.output and node in outs:
            bindings[pattern.output] = outs[node]
        for item in pattern.inputs:
            if item.arg.var and item.arg.var not in bindings:
                at = str(item.position) if item.element is None else f"e({_term(item.position)},{item.element})"
                text = inputs.get((node, at))
                if text is not None:
                    bindings[item.arg.var] = text
    for ctor, pattern in zip(ctors, rule.init_source):
        bindings[pattern.output] = _object_text(objects.get(ctor))
    path_lits = sorted(set().union(*(lits.get(n, set()) for n in nodes)))
    node_sites = [NodeSite(**pos.site(a), var=p.output, sequential=n in seq_ctor, spelling=spelled.get(n, ("", ""))[0],
                           form=spelled.get(n, ("", ""))[1], built=sorted(list(pos.span(c)) for c in built_by.get(n, ())))
                  for n, a, p in zip(nodes, anchors, rule.forward_source)]
    ctor_sites = [CtorSite(**pos.site(c), file=pos.file(c), var=p.output, object=bindings[p.output],
                           sequential=objects.get(c) is not None and objects[c].name == "seq",
                           other_uses=[list(use) for use in sorted(pos.span(e)[:2] for e in others)])
                  for c, p, others in zip(ctors, rule.init_source, uses, strict=True)]
    return Match(rule=rule.id, shape=rule.shape, file=path, line=line, end_line=end_line, function=function,
                 init_lines=sorted({pos.span(c)[0] for c in ctors if c >= 0}), bindings=bindings,
                 path=[Literal(text, holds) for text, holds in path_lits], path_truncated=any(n in cut for n in nodes),
                 col=col, end_col=end_col, class_=cls, nodes=node_sites, ctors=ctor_sites)


def _term(position: int | str) -> str:
    """A position as clingo prints it inside a term (a keyword is a quoted string there)."""
    return str(position) if isinstance(position, int) else str(clingo.String(position))


def _object_text(obj: clingo.Symbol | None) -> str:
    """`attr(C, "x")` -> `self.x`; elements and Sequential layers get an index."""
    if obj is None:
        return "?"
    if obj.name == "attr":
        return f"self.{obj.arguments[1].string}"
    if obj.name == "seq" and obj.arguments[0].name == "chunk":  # a layer of a list-built Sequential: place unknown
        return f"{_object_text(obj.arguments[0].arguments[0])}[i+{obj.arguments[1].number}]"
    if obj.name == "seq":
        return f"{_object_text(obj.arguments[0])}[{obj.arguments[1].number}]"
    if obj.name == "elem":
        return f"{_object_text(obj.arguments[0])}[*]"
    if obj.name == "inline":  # built where it is called: its source text
        return obj.arguments[1].string
    if obj.name == "this":  # an nn.Sequential subclass's own layers (`super().__init__(...)`)
        return "self"
    if obj.name == "loose":  # an nn.Sequential a method builds, seen where it is built
        return "nn.Sequential(...)"
    if obj.name == "built":  # a library module built where it is called (`nn.Softmax(dim=-1)(x)`)
        return "(built where it is called)"
    return str(obj)
