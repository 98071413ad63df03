"""adopter/rules/dsl.py and adopter/rules/compiler.py: parsing, errors with positions, compiled Datalog."""

import pytest

from adopter.records import AdopterError
from adopter.rules.compiler import compile_rule
from adopter.rules.dsl import parse_rule

GOOD = """
# What it does: an example
rule: example
extern: kernels.Fused
init: torch.nn.Dropout(0.1) -> $d; torch.nn.LayerNorm(eps=1e-5, bias!=False) -> $n => _
forward:
    $d($x) -> $a; $a + $r -> $s; -$s -> $m; $n($m) -> $y; * ; torch.nn.functional.softmax($y, dim=-1) -> $z
    =>
    kernels.Fused($d, $n, $x, $r) -> $z
"""


def test_a_rule_parses_into_nodes_with_positions_and_variables():
    rule = parse_rule(GOOD, "adopter/rules/x/example.adopt")
    assert rule.id == "example" and rule.doc == "What it does: an example"
    kinds = [n.kind for n in rule.forward_source]
    assert kinds == ["layer", "binary", "unary", "layer", "wildcard", "layer"]
    softmax = rule.forward_source[-1]
    assert softmax.callee == "torch.nn.functional.softmax" and softmax.line == 7
    assert [(i.position, i.arg.var, i.arg.const) for i in softmax.inputs] == [(0, "$y", None), ("dim", None, "-1")]
    norm = rule.init_source[1]
    assert [(i.position, i.arg.const, i.negated) for i in norm.inputs] == [("eps", "1e-05", False), ("bias", "False", True)]
    assert rule.init_target == [] and rule.forward_target[0].callee == "kernels.Fused"


def test_the_compiled_rule_is_readable_datalog_with_flow_order_and_feasibility():
    program = compile_rule(parse_rule(GOOD, "adopter/rules/x/example.adopt"))
    assert program.startswith('% rule "example"')
    # $a flows from the dropout into the left operand of `+`, written first or second (operand_order):
    # the `+` is reached along that edge, from the dropout (support.lp's rule_edge/5)
    assert "operand_order(X2, Left2, Right2)" in program and "rule_edge(X1, Left2, X2, R, K2)" in program
    assert "input_from(X2, Left2, X1)" not in program and "rule_node_at(X2, " not in program
    assert 'input_const(X6, "dim", "-1")' in program
    assert 'not ctor_const(C2, "bias", "False")' in program
    assert "not node_input(X3, 1, _, _)" in program and "node_input(X5" not in program  # unary `-`, not the wildcard
    # the types support.lp computes inputs and keys for: constructors' for `$d(...)`, ops, and any node for `*`
    types = sorted(line for line in program.splitlines() if line.startswith("pattern_"))
    assert types == ['pattern_any.', 'pattern_edge("example", 0, 1).', 'pattern_edge("example", 1, 2).',
                     'pattern_edge("example", 2, 3).', 'pattern_edge("example", 3, 5).', 'pattern_type("+").',
                     'pattern_type("-").', 'pattern_type("torch.Tensor.softmax").', 'pattern_type("torch.nn.Dropout").',
                     'pattern_type("torch.nn.LayerNorm").', 'pattern_type("torch.nn.Softmax").',
                     'pattern_type("torch.nn.functional.softmax").', 'pattern_type("torch.softmax").']
    # a softmax is any of its spellings: the node is found by its canonical operation (ops/canonical.lp)
    assert 'node_op(X6, ("torch.nn.functional.softmax"))' in program
    assert "K1 < K2" in program                                    # `;` is a sequence
    # the candidate says how its binary node matched
    assert program.count("cand_oriented(m(\"example\", R, (X1, X2, X3, X4, X5, X6,), (C1, C2,)), (Left2,)) :- ") == 1
    assert "mnode(" not in program  # nodes by position come from adopter.datalog/match/checks.lp
    # which node reads which (the checks in adopter/datalog/match/checks.lp hide only these values)
    edges = sorted(line for line in program.splitlines() if line.startswith("pattern_edge("))
    assert edges == [f'pattern_edge("example", {a}, {b}).' for a, b in ((0, 1), (1, 2), (2, 3), (3, 5))]
    # found node by node: one rule per pattern node, each carrying what later nodes use
    base, explain = program.split("#program explain.")
    steps = [line for line in base.splitlines() if ":-" in line]
    assert len(steps) == 6 and all(f'cand_part("example", {k}, R, ' in steps[k - 1] for k in range(1, 6))
    assert all(f'cand_part("example", {k - 1}, R, ' in steps[k - 1] for k in range(2, 7))
    # for `scan --explain`: the chain again with the constant dim=-1 not holding, under a name of its own
    relaxed = [line for line in explain.splitlines() if ":-" in line]
    assert len(relaxed) == 6 and 'not input_const(X6, "dim", "-1")' in explain
    assert relaxed[-1].startswith('relaxed(m("example", R, (X1, X2, X3, X4, X5, X6,), (C1, C2,)), c(5, "dim", "-1")) :- ')
    assert all('cand_part("example#const1", ' in line for line in relaxed)
    from adopter.datalog.engine import MAIN_PROGRAM, MATCH_PROGRAMS, ground
    ground([MAIN_PROGRAM, *MATCH_PROGRAMS], program)                # valid and safe: clingo grounds it


def test_the_checks_give_every_candidate_its_nodes_and_constructors_by_position():
    from adopter.datalog.engine import DATALOG_DIR, ground
    candidates = 'cand(m("r", r(1), (n(4), n(2), s(7, 1),), (c(9),))). cand(m("q", r(1), (n(5),), ())).'
    control = ground([DATALOG_DIR / "match" / "checks.lp"], candidates)
    atoms = {name: sorted(str(a.symbol) for a in control.symbolic_atoms.by_signature(name, 3)) for name in ("mnode", "mctor")}
    r, q = 'm("r",r(1),(n(4),n(2),s(7,1)),(c(9),))', 'm("q",r(1),(n(5),),())'
    assert atoms["mnode"] == sorted([f"mnode({r},0,n(4))", f"mnode({r},1,n(2))", f"mnode({r},2,s(7,1))",
                                     f"mnode({q},0,n(5))"])
    assert atoms["mctor"] == [f"mctor({r},0,c(9))"]


@pytest.mark.parametrize("text, line, col, message", [
    ("rule: bad\nforward: torch.nn.Linear($x) -> => _\n", 2, 33, "unexpected '=>'; expected a $variable"),
    # (the grammar's terminals in the DSL's words: a missing arrow said `expected one of _ARROW`)
    ("rule: bad\nforward: torch.nn.Linear($x) $y => _\n", 2, 30, "unexpected '$y'; expected '->'"),
    ("rule: bad\nforward: torch.nn.Linear($x -> $y => _\n", 2, 29, "unexpected '->'; expected one of ')', ',', '['"),
    ("rule: bad\nforward: torch.nn.Linear($x) -> $y => _\nforward: _ => _\n", 3, 1, "duplicate `forward:`"),
    ("rule: bad\ninit: torch.nn.Linear() -> $l => _\nforward: torch.nn.ReLU($x) -> $y => _\n", 2, 28,
     "init node $l is not called"),
    ("rule: bad\nforward: $nope($x) -> $y => _\n", 2, 10, "$nope is not bound by an `init:` node"),
    ("rule: bad\nforward: torch.relu($x) -> $y; torch.relu($y) -> $y => _\n", 2, 50, "$y is bound twice"),
    ("rule: bad\nextern: k.K\nforward: torch.relu($x) -> $y => k.K($q) -> $y\n", 3, 38, "$q in a target is not bound"),
    ("rule: other\nforward: torch.relu($x) -> $y => _\n", 1, 1, "differs from its file name"),
    ("rule: bad\ninit: torch.nn.ReLU() -> $a & torch.nn.ReLU() -> $b => _\nforward: $a($x) -> $y; $b($y) -> $z => _\n",
     2, 31, "`&` (nodes in any order) is for a `forward:` source pattern only"),
    ("rule: bad\nforward: torch.relu($x) -> $y => torch.relu|torch.tanh($x) -> $y\n", 2, 34,
     "`a|b` (either type) is for a source pattern only"),
    ("rule: bad\ninit: torch.nn.SiLU|torch.nn.GELU() -> $a => torch.nn.ReLU() -> $a\nforward: $a($x) -> $y => _\n",
     2, 46, "$a is built by one of several types (`a|b`)"),
    ("rule: bad\nforward: torch.relu|torch.nope($x) -> $y => _\n", 2, 10, "torch.nope"),
    ("rule: bad\ninit: _ => _\nforward: ~torch.nn.Linear($x) -> $y => _\n", 3, 10,
     "`~T()` (a T or a module wrapping one) is for an `init:` source pattern only"),
    ("rule: bad\nforward: torch.cat((($a, $b), $c)) -> $y => _\n", 2, 20, "a tuple `(...)` is an input of its own"),
    ("rule: bad\nextern: k.K\nforward: torch.relu($x) -> $y => k.K($x[:half]) -> $y\n", 3, 38,
     "a forward target may pass on a half its source takes"),
    ("rule: bad\nextern: k.K\nforward: torch.relu($x[half:]) -> $y => k.K($x[:half]) -> $y\n", 3, 45,
     "a forward target may pass on a half its source takes"),
])
def test_malformed_rules_name_file_line_and_column(text, line, col, message):
    with pytest.raises(AdopterError) as caught:
        parse_rule(text, "adopter/rules/x/bad.adopt")
    diagnostic = caught.value.diagnostic
    assert (diagnostic.file, diagnostic.line, diagnostic.col) == ("adopter/rules/x/bad.adopt", line, col)
    assert message in diagnostic.message


def test_a_binary_node_may_end_in_a_constant_and_scope_is_checked():
    rule = parse_rule("rule: half\nscope: functions\nforward: $x * 0.5 -> $h => _\n", "adopter/rules/x/half.adopt")
    assert rule.scope == "functions" and [i.arg.const for i in rule.forward_source[0].inputs] == [None, "0.5"]
    # scope says where a rewrite may edit, and whether a module-level function another file of
    # the project imports is scanned as a root (datalog/project/entries.lp): the two programs
    # differ by the facts that ask for those roots, and nothing else
    methods = parse_rule("rule: half\nforward: $x * 0.5 -> $h => _\n", "adopter/rules/x/half.adopt")
    assert methods.scope == "methods"
    assert compile_rule(rule).replace('module_roots_asked.\nfunctions_scope("half").\n', "") == compile_rule(methods)
    assert "functions_scope" not in compile_rule(methods)
    with pytest.raises(AdopterError, match="scope must be `methods` or `functions`"):
        parse_rule("rule: half\nscope: everywhere\nforward: $x * 0.5 -> $h => _\n", "adopter/rules/x/half.adopt")


def test_rules_are_data_nothing_is_evaluated():
    rule = parse_rule('rule: data\nextern: os.system\nforward: os.system("rm -rf /") -> $y => _\n', "data.adopt")
    assert rule.forward_source[0].callee == "os.system"


def test_parsed_rules_are_cached_by_content_and_a_changed_rule_is_parsed_again(tmp_path, monkeypatch):
    import adopter.rules.dsl
    from adopter.rules.registry import load_rules

    rule_file = tmp_path / "mine.adopt"
    rule_file.write_text("rule: mine\ninit: _ => _\nforward:\n    torch.nn.functional.softmax($x) -> $y\n    =>\n    _\n")
    cache = tmp_path / "cache"
    (first,) = load_rules([str(rule_file)], cache_dir=cache)
    parsed = []
    real = adopter.rules.dsl.load_rule
    monkeypatch.setattr(adopter.rules.dsl, "load_rule", lambda path: parsed.append(path) or real(path))
    (again,) = load_rules([str(rule_file)], cache_dir=cache)
    assert again == first and parsed == []  # from the cache: the parser is not called
    rule_file.write_text(rule_file.read_text().replace("softmax($x)", "log_softmax($x)"))
    (changed,) = load_rules([str(rule_file)], cache_dir=cache)
    assert parsed == [rule_file] and changed.forward_source[0].callee == "torch.nn.functional.log_softmax"
    (uncached,) = load_rules([str(rule_file)], cache_dir=None)
    assert len(parsed) == 2 and uncached == changed


def _chain_rule(n: int) -> str:
    """A rule whose forward pattern is n Dropout calls in a row."""
    nodes = "; ".join(f"torch.nn.Dropout($x{i}) -> $x{i + 1}" for i in range(n))
    return f"rule: chain\ninit: _ => _\nforward:\n    {nodes}\n    =>\n    _\n"


def _body_literals(program: str) -> int:
    """The number of body literals of a compiled program's rules (top-level `, ` splits)."""
    count = 0
    for line in program.splitlines():
        if ":-" in line:
            depth = 0
            count += 1
            for char in line.split(":-", 1)[1]:
                depth += (char == "(") - (char == ")")
                count += char == "," and depth == 0
    return count


def test_a_chain_rule_compiles_to_a_number_of_literals_linear_in_its_length():
    # no pairwise literals (`Xi != Xj` for every pair would grow with the square)
    body_literals, chain_rule = _body_literals, _chain_rule
    counts = [body_literals(compile_rule(parse_rule(chain_rule(n), "adopter/rules/x/chain.adopt"))) for n in (10, 20, 40, 80)]
    steps = [b - a for a, b in zip(counts, counts[1:])]
    assert steps == [steps[0], 2 * steps[0], 4 * steps[0]], counts


def test_the_written_order_means_nothing_and_a_bar_gives_alternative_types():
    text = ("rule: qkv\nmetadata: allowed\ninit: torch.nn.Linear() -> $q; torch.nn.Linear() -> $k => _\n"
            "forward: $q($x) -> $a; $k($x) -> $b & torch.Tensor.view|torch.Tensor.reshape($a) -> $c => _\n")
    rule = parse_rule(text, "adopter/rules/x/qkv.adopt")
    assert [n.ordered for n in rule.forward_source] == [True, True, False] and rule.metadata == "allowed"
    assert rule.forward_source[2].callees == ("torch.Tensor.view", "torch.Tensor.reshape")
    program = compile_rule(rule)
    # the split runs after the projection it reads (an edge); the two projections are not
    # interchangeable (only $a is split), so they run in any order and are kept distinct by `!=`;
    # the split and the other projection are both calls, so they are kept distinct too
    assert "K1 < K3" in program and "K1 < K2" not in program and "K2 < K3" not in program
    assert "X1 != X2" in program and "X2 != X3" in program and "X1 != X3" not in program
    assert 'node_type(X3, ("torch.Tensor.view";"torch.Tensor.reshape"))' in program
    assert 'metadata_allowed("qkv").' in program
    from adopter.datalog.engine import MAIN_PROGRAM, MATCH_PROGRAMS, ground
    ground([MAIN_PROGRAM, *MATCH_PROGRAMS], program)
    with pytest.raises(AdopterError, match="metadata must be `breaks` or `allowed`"):
        parse_rule(text.replace("metadata: allowed", "metadata: maybe"), "adopter/rules/x/qkv.adopt")


def test_a_consumer_whose_inputs_are_bound_is_joined_right_after_them():
    # three projections of one input, then their head splits: each split is bound right after
    # its projection, so projections no split reads drop out before they are paired
    text = ("rule: qkv\ninit: torch.nn.Linear() -> $q; torch.nn.Linear() -> $k => _\n"
            "forward: $q($x) -> $a; $k($x) -> $b & torch.Tensor.view($a) -> $c & torch.Tensor.view($b) -> $d => _\n")
    steps = compile_rule(parse_rule(text, "adopter/rules/x/qkv.adopt")).splitlines()[1:5]
    assert ["rule_edge(X1, 0, X3, R, K3)" in step for step in steps] == [False, True, False, False]
    assert ["rule_edge(X2, 0, X4, R, K4)" in step for step in steps] == [False, False, False, True]
    # the candidate keeps the nodes in the pattern's positions
    assert steps[-1].startswith('cand(m("qkv", R, (X1, X2, X3, X4,), (C1, C2,)))')
    # a node that reads two earlier nodes waits for both (swiglu's product), as written
    swiglu = ("rule: glu\ninit: torch.nn.Linear() -> $g; torch.nn.Linear() -> $u => _\n"
              "forward: $g($x) -> $a; torch.nn.functional.silu($a) -> $s; $u($x) -> $b; $s * $b -> $y => _\n")
    steps = compile_rule(parse_rule(swiglu, "adopter/rules/x/glu.adopt")).splitlines()[1:5]
    # the projections start from the root's nodes; silu and the product along an edge (the
    # product's first: its left operand, silu's output; its right one stays an input_from)
    assert ["rule_node_at(X{}, ".format(k + 1) in step for k, step in enumerate(steps)] == [True, False, True, False]
    assert "rule_edge(X1, 0, X2, R, K2)" in steps[1] and "rule_edge(X2, Left4, X4, R, K4)" in steps[3]
    assert "input_from(X4, Right4, X3)" in steps[3]


def test_a_bar_in_an_init_source_gives_a_constructor_several_types():
    # swiglu's activation: a module from ACT2FN, or nn.SiLU / nn.GELU; the target passes it on
    text = ("rule: gated\nextern: transformers.activations.ACT2FN, k.gated\n"
            "init: torch.nn.Linear() -> $g; transformers.activations.ACT2FN|torch.nn.SiLU() -> $act => _\n"
            "forward: $g($x) -> $h; $act($h) -> $y => k.gated($g, $act, $x) -> $y\n")
    rule = parse_rule(text, "adopter/rules/x/gated.adopt")
    assert rule.init_source[1].callees == ("transformers.activations.ACT2FN", "torch.nn.SiLU")
    program = compile_rule(rule)
    assert 'value_type(C2, ("transformers.activations.ACT2FN";"torch.nn.SiLU"))' in program
    assert 'pattern_type("torch.nn.SiLU").' in program and 'pattern_type("transformers.activations.ACT2FN").' in program
    from adopter.datalog.engine import MAIN_PROGRAM, MATCH_PROGRAMS, ground
    ground([MAIN_PROGRAM, *MATCH_PROGRAMS], program)
    with pytest.raises(AdopterError, match="unknown name torch.nn.Silu"):
        parse_rule(text.replace("torch.nn.SiLU", "torch.nn.Silu"), "adopter/rules/x/gated.adopt")


def test_halves_and_tuple_elements_compile_to_parts_of_inputs():
    # rotary's pattern: `rotate_half(q)` is `torch.cat((-q2, q1), dim=-1)` of the halves of q
    text = ("rule: rot\nforward: $q * $c -> $a; -$q[half:] -> $n; torch.cat(($n, $q[:half]), dim=-1) -> $r; "
            "$a + $r -> $y => _\n")
    rule = parse_rule(text, "adopter/rules/x/rot.adopt")
    cat = rule.forward_source[2]
    assert [(i.position, i.element, i.arg.var, i.arg.part) for i in cat.inputs] == [
        (0, 0, "$n", None), (0, 1, "$q", ("half", 0)), ("dim", None, None, None)]
    assert rule.forward_source[1].inputs[0].arg.part == ("half", 1)
    program = compile_rule(rule)
    assert "rule_edge(X2, e(0, 0), X3, R, K3)" in program and "input_half(X3, e(0, 1), 0, V_q)" in program
    assert "input_half(X2, 0, 1, V_q)" in program and "input_value(X1, Left1, V_q)" in program
    assert "halves_asked." in program and 'elements_asked("torch.cat", 0).' in program
    from adopter.datalog.engine import MAIN_PROGRAM, MATCH_PROGRAMS, ground
    ground([MAIN_PROGRAM, *MATCH_PROGRAMS], program)


def test_alternate_items_and_halves_of_a_computed_value_compile_to_parts_of_inputs():
    # rotary.interleaved's pairs, and swiglu's chunked shape: halves of a node's output
    text = ("rule: rot\nforward: $q * $c -> $a & -$q[1::2] -> $n; torch.stack(($n, $q[::2]), dim=-1) -> $s; "
            "$a + $s -> $y => _\n")
    rule = parse_rule(text, "adopter/rules/x/rot.adopt")
    assert [(i.arg.var, i.arg.part) for i in rule.forward_source[2].inputs[:2]] == [("$n", None), ("$q", ("parity", 0))]
    program = compile_rule(rule)
    assert "input_parity(X2, 0, 1, V_q)" in program and "input_parity(X3, e(0, 1), 0, V_q)" in program
    assert "parities_asked." in program and "halves_asked." not in program
    chunked = parse_rule("rule: glu\nextern: k.mul\ninit: torch.nn.Linear() -> $p => _\n"
                         "forward: $p($x) -> $h; torch.nn.functional.silu($h[half:]) -> $a; $h[:half] * $a -> $y "
                         "=> k.mul($h[half:], $h[:half]) -> $y\n", "adopter/rules/x/glu.adopt")
    assert chunked.kept_nodes == [0]  # the projection is read only through its halves: the rewrite keeps it
    program = compile_rule(chunked)
    assert "input_half(X2, 0, 1, node(X1))" in program and 'pattern_kept("glu", 0).' in program


def test_items_of_a_last_dimension_of_size_two_compile_to_parts_of_inputs():
    # Flux's rotation: a 2x2 matrix times each pair, `m[..., 0] * p[..., 0] + m[..., 1] * p[..., 1]`
    text = ("rule: rot\nforward: torch.Tensor.reshape($q) -> $p; $m[..., 0] * $p[..., 0] -> $a; "
            "$m[..., 1] * $p[..., 1] -> $b; $a + $b -> $y => _\n")
    rule = parse_rule(text, "adopter/rules/x/rot.adopt")
    assert [i.arg.part for i in rule.forward_source[1].inputs] == [("item", 0), ("item", 0)]
    program = compile_rule(rule)
    assert "input_item(X2, Left2, 0, V_m)" in program and "input_item(X3, Left3, 1, V_m)" in program
    assert "input_item(X2, Right2, 0, node(X1))" in program and "items_asked." in program
    from adopter.datalog.engine import MAIN_PROGRAM, MATCH_PROGRAMS, ground
    ground([MAIN_PROGRAM, *MATCH_PROGRAMS], program)
    with pytest.raises(AdopterError, match="halves"):
        parse_rule("rule: r\nextern: k.f\nforward: $a * $p[..., 0] -> $y => k.f($p[..., 0]) -> $y\n",
                   "adopter/rules/x/r.adopt")
    assert 'pattern_edge("glu", 0,' not in program  # its halves are not values the fusion hides
    from adopter.datalog.engine import MAIN_PROGRAM, MATCH_PROGRAMS, ground
    ground([MAIN_PROGRAM, *MATCH_PROGRAMS], program)


def test_a_rule_of_several_shapes_is_one_id_with_a_key_per_file():
    rule = parse_rule("rule: glu\nforward: torch.relu($x) -> $y => _\n", "adopter/rules/x/glu.chunked.adopt")
    assert (rule.id, rule.shape, rule.key) == ("glu", "chunked", "glu.chunked")
    assert 'cand(m("glu.chunked", R' in compile_rule(rule)
    for path, message in [("adopter/rules/x/other.chunked.adopt", "differs from its file name"),
                          ("adopter/rules/x/glu.two.parts.adopt", "must be letters, digits and `_`"),
                          ("adopter/rules/x/glu.-x.adopt", "must be letters, digits and `_`")]:
        with pytest.raises(AdopterError) as caught:
            parse_rule("rule: glu\nforward: torch.relu($x) -> $y => _\n", path)
        assert message in caught.value.diagnostic.message, path


def test_a_reached_input_is_compiled_to_element_wise_reach_and_only_in_a_detect_only_rule():
    text = ("rule: t\ninit: _ => _\nforward: torch.matmul($q, $k) -> $s; torch.nn.functional.softmax(~$s, dim=-1) -> $p"
            " => {target}\n")
    rule = parse_rule(text.format(target="_"), "adopter/rules/x/t.adopt")
    assert rule.forward_source[1].inputs[0].arg.reached
    program = compile_rule(rule)
    assert "rule_reach(X1, 0, X2, R, K2)" in program
    # the chains are followed from the nodes of the producer's types only (every spelling of matmul)
    assert 'reach_type("@").' in program and 'reach_type("torch.matmul").' in program
    with pytest.raises(AdopterError, match="a rule that writes it has no target"):
        parse_rule(text.format(target="torch.nn.functional.softmax($s) -> $p"), "adopter/rules/x/t.adopt")
    with pytest.raises(AdopterError, match="is not computed by this pattern"):
        parse_rule("rule: t\ninit: _ => _\nforward: torch.nn.functional.softmax(~$x, dim=-1) -> $p => _\n",
                   "adopter/rules/x/t.adopt")


def test_a_wrapped_type_in_an_init_source_takes_modules_wrapping_one():
    # swiglu's projections: an nn.Linear, or LoRA's Linear (types/wrappers.lp)
    text = ("rule: gated\ninit: ~torch.nn.Linear() -> $g; torch.nn.Linear() -> $u => _\n"
            "forward: $g($x) -> $a; torch.nn.functional.silu($a) -> $s; $u($x) -> $b; $s * $b -> $y => _\n")
    rule = parse_rule(text, "adopter/rules/x/gated.adopt")
    assert [n.wrapped for n in rule.init_source] == [True, False]
    program = compile_rule(rule)
    assert 'wrapped_type(C1, ("torch.nn.Linear"))' in program and 'value_type(C2, ("torch.nn.Linear"))' in program
    assert 'wrap_asked("torch.nn.Linear").' in program


def test_an_operand_may_be_reached_and_a_bitwise_not_is_still_a_unary_node():
    rule = parse_rule("rule: t\ninit: _ => _\nforward: $q * $c -> $a; $r * $s -> $b; ~$a + ~$b -> $y; ~$y -> $z => _\n",
                      "adopter/rules/x/t.adopt")
    total, invert = rule.forward_source[2], rule.forward_source[3]
    assert [(i.arg.var, i.arg.reached) for i in total.inputs] == [("$a", True), ("$b", True)]
    assert (invert.kind, invert.op, invert.inputs[0].arg.reached) == ("unary", "~", False)
    program = compile_rule(rule)
    assert "pattern_reach_edge(\"t\", 0, 2)." in program and "pattern_reach_edge(\"t\", 1, 2)." in program
