"""adopter/rules/typecheck.py: what each `$variable` is (module, tensor, value), known names, `extern:`.

Each bad rule is one line of a table with the exact diagnostic the CLI prints.
"""

import pytest

from adopter.records import AdopterError
from adopter.rules.dsl import parse_rule
from adopter.rules.registry import bundled_rule_files
from adopter.catalogue import KINDS, kinds as catalogue

PATH = "adopter/rules/x/bad.adopt"

BAD = [
    pytest.param(  # the reported bug: the up projection reads $y, the target passes only $x, and y was dropped
        "rule: bad\nextern: adopter_kernels.gated_silu\ninit: torch.nn.Linear() -> $gate; torch.nn.Linear() -> $up => _\n"
        "forward: $gate($x) -> $g; torch.nn.functional.silu($g) -> $a; $up($y) -> $u; $a * $u -> $h\n"
        "    => adopter_kernels.gated_silu($gate, $up, $x) -> $h\n",
        "adopter/rules/x/bad.adopt:4:67: error: $y is a value the matched code passes in, and the target does not pass "
        "it on: the rewrite would drop it; pass $y to the target",
        id="target-drops-an-input"),
    pytest.param(  # a module the source calls, neither passed on nor rebuilt by the target's init
        "rule: bad\nextern: adopter_kernels.silu_mul\ninit: torch.nn.Linear() -> $gate; torch.nn.Linear() -> $up => _\n"
        "forward: $gate($x) -> $g; torch.nn.functional.silu($g) -> $a; $up($x) -> $u; $a * $u -> $h\n"
        "    => adopter_kernels.silu_mul($gate, $x) -> $h\n",
        "adopter/rules/x/bad.adopt:4:63: error: $up is a module the source calls, and the target neither calls it, "
        "passes it on, nor rebuilds it in `init:`: the rewrite would drop its computation",
        id="target-drops-a-module"),
    pytest.param(  # the reported bug: a module in a binary op, bound to `self.dropout` by the match
        "rule: bad\ninit: torch.nn.Dropout() -> $drop; torch.nn.LayerNorm() -> $norm => _\n"
        "forward: $drop($x) -> $a; $a + $drop -> $s; $norm($s) -> $y => _\n",
        "adopter/rules/x/bad.adopt:3:32: error: $drop is a module (bound by `init:` at 2:29), used here as an operand; "
        "call the module and use its output instead: `$drop(...) -> $out`, then `$out`",
        id="module-as-operand"),
    pytest.param(
        "rule: bad\ninit: torch.nn.Dropout() -> $drop => _\n"
        "forward: $drop($x) -> $a; torch.nn.functional.relu($drop) -> $y => _\n",
        "adopter/rules/x/bad.adopt:3:52: error: $drop is a module (bound by `init:` at 2:29), used here as a tensor input; "
        "call the module and use its output instead: `$drop(...) -> $out`, then `$out`",
        id="module-as-tensor-input"),
    pytest.param(
        "rule: bad\nforward: torch.relu($x) -> $h; $h($x) -> $y => _\n",
        "adopter/rules/x/bad.adopt:2:32: error: $h is a tensor (computed in `forward:` at 2:28), called here as a module; "
        "only a module can be called: bind the module with an `init:` node (`init: torch.nn.Linear(...) -> $h`), "
        "or name the function (`torch.nn.functional.relu($x) -> $y`)",
        id="tensor-as-module"),
    pytest.param(
        "rule: bad\ninit: torch.nn.Linear($h) -> $l => _\nforward: torch.relu($x) -> $h; $l($h) -> $y => _\n",
        "adopter/rules/x/bad.adopt:2:23: error: $h is a tensor (computed in `forward:` at 3:28), used here as a "
        "construction argument, when no tensor exists yet; an `init:` argument is a constant, source text in "
        "backquotes like `config.hidden_size`, or a `$name` for a configuration value",
        id="tensor-as-init-argument"),
    pytest.param(
        "rule: bad\ninit: torch.nn.Linear() -> $l; torch.nn.Sequential($l) -> $s => _\n"
        "forward: $l($x) -> $h; $s($h) -> $y => _\n",
        "adopter/rules/x/bad.adopt:2:52: error: $l is a module (bound by `init:` at 2:28), used here as a construction "
        "argument: a source pattern cannot tie a constructor's argument to another module; match the argument "
        "by its source text in backquotes (like `self.dense`), or leave it out",
        id="module-as-init-argument"),
    pytest.param(
        "rule: bad\ninit: torch.nn.Linear($act) -> $l => _\nforward: $l($x) -> $h; $act($h) -> $y => _\n",
        "adopter/rules/x/bad.adopt:3:24: error: $act is a construction value (an `init:` argument at 2:23), called here "
        "as a module; only a module can be called: bind the module with an `init:` node "
        "(`init: torch.nn.Linear(...) -> $act`), or name the function (`torch.nn.functional.relu($x) -> $y`)",
        id="value-as-module"),
    pytest.param(
        "rule: bad\ninit: torch.nn.Linear() -> $l => _\nforward: $l($x) -> $l => _\n",
        "adopter/rules/x/bad.adopt:3:20: error: $l is a module (bound by `init:` at 2:28) and a tensor here; "
        "give the output another name",
        id="module-and-tensor"),
    pytest.param(
        "rule: bad\ninit: torch.nn.Dropout() -> $drop => _\nforward: $drop($x) -> $a => $a + $drop -> $y\n",
        "adopter/rules/x/bad.adopt:3:34: error: $drop is a module (bound by `init:` at 2:29), used here as an operand; "
        "call the module and use its output instead: `$drop(...) -> $out`, then `$out`",
        id="module-as-operand-in-target"),
    pytest.param(
        "rule: bad\nforward: torch.relu($x) -> $h => $h($x) -> $h\n",
        "adopter/rules/x/bad.adopt:2:34: error: $h is a tensor (computed in `forward:` at 2:28), called here as a module; "
        "only a module can be called: bind the module with an `init:` node (`init: torch.nn.Linear(...) -> $h`), "
        "or name the function (`torch.nn.functional.relu($x) -> $y`)",
        id="tensor-as-module-in-target"),
    pytest.param(
        "rule: bad\nforward: torch.nn.NoSuchLayerXYZ($x) -> $y => _\n",
        "adopter/rules/x/bad.adopt:2:10: error: unknown name torch.nn.NoSuchLayerXYZ: not in the catalogue "
        "(adopter/catalogue/); a name from another package is declared `extern: torch.nn.NoSuchLayerXYZ`",
        id="unknown-type"),
    pytest.param(
        "rule: bad\ninit: torch.nn.LayerNrom() -> $n => _\nforward: $n($x) -> $y => _\n",
        "adopter/rules/x/bad.adopt:2:7: error: unknown name torch.nn.LayerNrom: did you mean torch.nn.LayerNorm? "
        "(a name from another package is declared `extern: torch.nn.LayerNrom`)",
        id="typo-with-suggestion"),
    pytest.param(
        "rule: bad\nforward: torch.view($x) -> $y => _\n",
        "adopter/rules/x/bad.adopt:2:10: error: unknown name torch.view: did you mean torch.Tensor.view or torch.divide "
        "or torch.device? (a tensor method is written `torch.Tensor.<method>`; a name from another package is "
        "declared `extern: torch.view`)",
        id="tensor-method-spelling"),
    pytest.param(
        "rule: bad\ninit: transformers.activations.ACT2FN(`config.hidden_act`) -> $act => _\n"
        "forward: $act($x) -> $y => _\n",
        "adopter/rules/x/bad.adopt:2:7: error: unknown name transformers.activations.ACT2FN: the catalogue "
        "(adopter/catalogue/) lists torch only; a name from another package is declared "
        "`extern: transformers.activations.ACT2FN`",
        id="other-package-without-extern"),
    pytest.param(
        "rule: bad\ninit: torch.nn.functional.relu() -> $r => _\nforward: $r($x) -> $y => _\n",
        "adopter/rules/x/bad.adopt:2:7: error: torch.nn.functional.relu is a function, not a module class: an `init:` "
        "node constructs a torch.nn.Module subclass; construct the module class instead "
        "(`torch.nn.ReLU(...) -> $name`), or call the function in `forward:` (`torch.nn.functional.relu($x) -> $y`)",
        id="init-constructs-a-function"),
    pytest.param(
        "rule: bad\ninit: torch.Size() -> $r => _\nforward: $r($x) -> $y => _\n",
        "adopter/rules/x/bad.adopt:2:7: error: torch.Size is a class, not a module class: an `init:` node constructs a "
        "torch.nn.Module subclass; call the class in `forward:` (`torch.Size($x) -> $y`)",
        id="init-constructs-a-class"),
    pytest.param(
        "rule: bad\nextern: transformers.activations.ACT2FN\nforward: torch.relu($x) -> $y => _\n",
        "adopter/rules/x/bad.adopt:2:9: error: extern transformers.activations.ACT2FN is not named by the rule's "
        "patterns; remove it from `extern:`",
        id="unused-extern"),
]


@pytest.mark.parametrize("text, diagnostic", BAD)
def test_a_badly_typed_rule_is_refused_with_its_position_and_what_to_write(text, diagnostic):
    with pytest.raises(AdopterError) as caught:
        parse_rule(text, PATH)
    assert str(caught.value.diagnostic) == diagnostic


@pytest.mark.parametrize("rule_file", bundled_rule_files(), ids=lambda f: f.stem)
def test_every_bundled_rule_passes_the_checker(rule_file):
    rule = parse_rule(rule_file.read_text(encoding="utf-8"), str(rule_file))
    assert all(name not in catalogue() for name in rule.extern)  # extern only where needed


def test_extern_admits_a_name_the_catalogue_does_not_know_in_any_position():
    rule = parse_rule("rule: ok\nextern: torch.nn.NoSuchLayerXYZ, transformers.activations.ACT2FN\n"
                      "init: transformers.activations.ACT2FN(`config.hidden_act`) -> $act => _\n"
                      "forward: $act($x) -> $h; torch.nn.NoSuchLayerXYZ($h) -> $y => _\n", "adopter/rules/x/ok.adopt")
    assert rule.extern == ("torch.nn.NoSuchLayerXYZ", "transformers.activations.ACT2FN")


def test_a_target_may_pass_modules_to_a_kernel_and_build_a_module_from_modules():
    parse_rule("rule: ok\nextern: k.Fused\n"
               "init: torch.nn.Conv2d() -> $conv; torch.nn.BatchNorm2d() -> $bn => k.Fused($conv, $bn) -> $fused\n"
               "forward: $conv($x) -> $c; $bn($c) -> $y => $fused($x) -> $y\n", "adopter/rules/x/ok.adopt")
    parse_rule("rule: ok\nextern: k.fused_op\ninit: torch.nn.Dropout() -> $d => _\n"
               "forward: $d($x) -> $y => k.fused_op($d, $x) -> $y\n", "adopter/rules/x/ok.adopt")


def test_a_forward_input_may_name_a_construction_value():
    # the compiler ties their source texts (input_text = ctor_text)
    parse_rule("rule: ok\ninit: torch.nn.Dropout($p) -> $d => _\n"
               "forward: $d($x) -> $a; torch.nn.functional.dropout($a, $p) -> $y => _\n", "adopter/rules/x/ok.adopt")


def test_the_catalogue_names_torch_layers_functions_and_tensor_methods_by_kind():
    known = catalogue()
    assert set(known.values()) <= set(KINDS)
    assert known["torch.nn.LayerNorm"] == "module" and known["torch.nn.functional.softmax"] == "function"
    assert known["torch.Tensor.view"] == "method" and known["torch.Size"] == "class"
