"""The rewriter: golden diffs per rule fixture, idempotence, refusals that leave the source
untouched, the DPT scope case on the zoo, and `adopter apply`'s modes."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import assert_golden
from adopter.api.apply import unified_diff
from adopter.api.scan import scan
from adopter.rewrite.patch import patch_source
from adopter.rules.registry import bundled_rules, load_rules
from evaluation.zoo import zoo_modules
from evaluation.zoo_modern import corpus_modules, corpus_root

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "tests" / "golden"
FIXTURES = {rule_id: files[0].with_suffix(".py") for rule_id, files in bundled_rules().items()}  # <pack>/<id>.py
RULE_IDS = sorted(FIXTURES)


def patch_file(path: Path, rule_ids: list[str] | None = None, name: str | None = None, modules=None):
    from adopter.api.options import ModuleNames

    rules = load_rules(rule_ids)
    result = scan([str(path)], rules, jobs=1, layout=True, modules=modules or ModuleNames())
    matches = result.matches
    return patch_source(name or str(path), path.read_text(), matches, {r.key: r for r in rules})


def golden_text(patch) -> str:
    refused = "".join(f"# not rewritten: line {m.line}: {reason}\n" for m, reason in patch.refused)
    return unified_diff(patch) + refused


@pytest.mark.parametrize("rule_id", RULE_IDS)
def test_golden_diff(rule_id, tmp_path):
    fixture = FIXTURES[rule_id]
    patch = patch_file(fixture, [rule_id], name=str(fixture.relative_to(ROOT)))
    assert_golden(golden_text(patch), GOLDEN / f"{rule_id}.diff")
    ast.parse(patch.patched)


@pytest.mark.parametrize("rule_id", RULE_IDS)
def test_applying_twice_changes_nothing(rule_id, tmp_path):
    fixture = FIXTURES[rule_id]
    once = tmp_path / fixture.name
    once.write_text(patch_file(fixture, [rule_id]).patched)
    again = patch_file(once, [rule_id])
    assert again.patched == once.read_text()
    assert again.applied == []


def test_a_refused_match_leaves_its_code_untouched(tmp_path):
    source = tmp_path / "m.py"
    source.write_text("import torch.nn.functional as F\nfrom torch import nn\n\n\nclass A(nn.Module):\n"
                      "    def forward(self, x):\n        return F.softmax(x, dim=1)\n")
    patch = patch_file(source, ["softmax"])
    assert [reason for _, reason in patch.refused] == [
        "softmax over dim=1: the kernel normalises the last dimension (dim=-1) only"]
    assert patch.patched == source.read_text() and not patch.changed


def test_a_rule_with_scope_methods_leaves_module_level_functions_alone(tmp_path):
    # (a copy of the softmax rule without `scope: functions`: `methods` is the default)
    rule = tmp_path / "softmax_in_methods.adopt"
    rule.write_text("rule: softmax_in_methods\nextern: xformers.triton.softmax.softmax\ninit: _ => _\n"
                    "forward:\n    torch.nn.functional.softmax($x) -> $y\n    =>\n"
                    "    xformers.triton.softmax.softmax($x) -> $y\n")
    source = tmp_path / "m.py"
    source.write_text("import torch.nn.functional as F\nfrom torch import nn\n\n\ndef probs(x):\n"
                      "    return F.softmax(x, dim=-1)\n\n\nclass A(nn.Module):\n    def forward(self, x):\n"
                      "        return probs(x) + F.softmax(x, dim=-1)\n")
    patch = patch_file(source, [str(rule)])
    assert [(m.line, reason) for m, reason in patch.refused] == [
        (6, "the match is in module-level function `probs`, which other code may call; the rule's "
            "`scope: methods` leaves such functions alone")]
    assert [m.line for m in patch.applied] == [11]
    # the bundled softmax rule (`scope: functions`) rewrites both
    assert [m.line for m in patch_file(source, ["softmax"]).applied] == [6, 11]


def test_a_match_in_a_function_torchscript_compiles_is_not_rewritten(tmp_path):
    source = tmp_path / "m.py"
    source.write_text("import torch\nimport torch.nn.functional as F\nfrom torch import nn\n"
                      "from torch.jit import script as compiled\n\n\n"
                      "@torch.jit.script\ndef probs(x: torch.Tensor):\n    return F.softmax(x, dim=-1)\n\n\n"
                      "@compiled\ndef probs2(x: torch.Tensor):\n    return F.softmax(x, dim=-1)\n\n\n"
                      "@torch.no_grad()\ndef probs3(x):\n    return F.softmax(x, dim=-1)\n\n\n"
                      "class A(nn.Module):\n    def forward(self, x):\n        return probs(x) + probs2(x) + probs3(x)\n")
    patch = patch_file(source, ["softmax"])
    assert [(m.line, reason) for m, reason in patch.refused] == [
        (line, f"the match is in `{name}`, which `@torch.jit.script` compiles: a kernel called there must compile "
               "as TorchScript too; such matches are found, not rewritten")
        for line, name in ((9, "probs"), (14, "probs2"))]
    assert [m.line for m in patch.applied] == [19]


def test_a_fusion_whose_removed_value_is_read_on_some_path_needs_a_fallback(tmp_path):
    source = tmp_path / "m.py"
    source.write_text("import torch\nfrom torch import nn\n\n\nclass A(nn.Module):\n    def __init__(self):\n"
                      "        super().__init__()\n        self.dropout = nn.Dropout(0.1)\n"
                      "        self.norm = nn.LayerNorm(4)\n\n    def forward(self, x, r, keep=False):\n"
                      "        h = self.dropout(x)\n        y = self.norm(h + r)\n"
                      "        return (y, h) if keep else (y,)\n")
    patch = patch_file(source, ["dropout_layernorm"])
    assert [reason for _, reason in patch.refused] == [
        "a value the fusion removes is also read when keep; the rule has no `fallback: eager`"]
    assert not patch.changed


def test_softmax_dtype_becomes_a_cast_of_the_input(tmp_path):
    source = tmp_path / "m.py"
    source.write_text("import torch\nfrom torch import nn\n\n\nclass A(nn.Module):\n    def forward(self, x, y):\n"
                      "        return nn.functional.softmax(x + y, dim=-1, dtype=torch.float32)\n")
    patched = patch_file(source, ["softmax"]).patched
    # `softmax` already names something in the file (an attribute), so the import gets an alias
    assert "return xformers_softmax((x + y).to(torch.float32))" in patched
    assert "from xformers.triton.softmax import softmax as xformers_softmax" in patched



def test_softmax_arguments_are_bound_by_the_catalogue_s_signature(tmp_path):
    """`F.softmax(s, -1, 3)` passes `_stacklevel`, not dtype, third (adopter/catalogue/inputs/torch.tsv):
    it is refused, not turned into `.to(3)` (a move to device 3); a dtype given by position is cast."""
    source = tmp_path / "m.py"
    source.write_text("import torch\nimport torch.nn.functional as F\nfrom torch import nn\n\n\nclass A(nn.Module):\n"
                      "    def forward(self, s, t):\n        a = F.softmax(s, -1, 3)\n"
                      "        b = F.softmax(t, -1, 3, torch.float32)\n        return F.softmax(a + b, -1, dtype=torch.half)\n")
    patch = patch_file(source, ["softmax"])
    assert [(m.line, reason) for m, reason in patch.refused] == [
        (8, "`F.softmax(...)` passes `_stacklevel` (argument 3), which the kernel does not take"),
        (9, "`F.softmax(...)` passes `_stacklevel` (argument 3), which the kernel does not take")]
    assert ".to(3)" not in patch.patched
    assert "return xformers_softmax((a + b).to(torch.half))" in patch.patched

GATED = """import torch
from torch import nn


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.gate, self.up, self.act = nn.Linear(4, 8), nn.Linear(4, 8), nn.SiLU()

    def forward(self, x):
        \"\"\"A gated MLP.\"\"\"
        g = self.act(self.gate(x))
        u = self.up(x)

        h = g * u
        return h



class Kept(MLP):
    def forward(self, x):
        y = x + 1
        g = self.act(self.gate(y))
        u = self.up(y)

        h = g * u
        return h


class Commented(MLP):
    def forward(self, x):
        # a comment over the block's first statement, parted from it by a blank line

        g = self.act(self.gate(x))
        u = self.up(x)
        h = g * u
        return h
"""


def test_a_statement_left_first_in_its_block_by_a_rewrite_does_not_open_it_with_a_blank_line(tmp_path):
    source = tmp_path / "m.py"
    source.write_text(GATED)
    patched = patch_file(source, ["swiglu"]).patched
    # the first two statements of forward went: the rewritten product is first after the docstring
    assert '"""A gated MLP."""\n        h = gated_act(self.gate, self.up, self.act, x)\n' in patched
    # a kept statement before them: the blank line still parts it from the product
    assert "        y = x + 1\n\n        h = gated_act(self.gate, self.up, self.act, y)\n" in patched
    # a comment the removed statement carried stays, with the blank line below it
    assert "blank line\n\n        h = gated_act(self.gate, self.up, self.act, x)\n" in patched


def test_inputs_passed_by_keyword_are_matched_and_rewritten(tmp_path):
    source = tmp_path / "m.py"
    source.write_text("import torch\nfrom torch import nn\nimport torch.nn.functional as F\n\n\n"
                      "class A(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
                      "        self.drop = nn.Dropout(0.1)\n        self.norm = nn.LayerNorm(8)\n\n"
                      "    def forward(self, x, h):\n        p = F.softmax(input=x, dim=-1)\n"
                      "        q = F.softmax(dim=-1, input=p)\n"
                      "        return self.norm(input=self.drop(input=q) + h)\n")
    rules = load_rules(["softmax", "dropout_layernorm"])
    matches = scan([str(source)], rules, jobs=1).matches
    assert sorted((m.rule, m.line) for m in matches) == [("dropout_layernorm", 15), ("softmax", 13), ("softmax", 14)]
    patched = patch_file(source, ["softmax"]).patched
    assert "p = xformers_softmax(x)" in patched and "q = xformers_softmax(p)" in patched
    # a softmax over another dimension, passed by keyword, is still refused
    source.write_text(source.read_text().replace("input=x, dim=-1", "input=x, dim=0"))
    patch = patch_file(source, ["softmax"])
    assert [m.line for m, _reason in patch.refused] == [13]


def test_a_layer_called_through_another_name_is_found_and_its_construction_kept(tmp_path):
    source = tmp_path / "m.py"
    source.write_text("from torch import nn\n\n\nclass A(nn.Module):\n    def __init__(self):\n"
                      "        super().__init__()\n        self.dropout = nn.Dropout(0.1)\n"
                      "        self.LayerNorm = nn.LayerNorm(8)\n        self.norm = self.LayerNorm\n\n"
                      "    def forward(self, y, x):\n        return self.norm(self.dropout(y) + x)\n")
    assert [(m.rule, m.line) for m in scan([str(source)], load_rules(["dropout_layernorm"]), jobs=1).matches] == [
        ("dropout_layernorm", 12)]
    # the alias reads the construction: it stays, so the norm's parameters cannot move into the kernel
    patch = patch_file(source, ["dropout_layernorm"])
    assert not patch.changed
    assert [reason for _m, reason in patch.refused] == [
        "self.norm is used elsewhere (line 9), so its parameters cannot move into the kernel"]
    # called by its own name, the construction is still read by the alias: removing it made
    # `self.norm = self.LayerNorm` raise AttributeError when the patched model was built
    source.write_text(source.read_text().replace("return self.norm(", "return self.LayerNorm("))
    patch = patch_file(source, ["dropout_layernorm"])
    assert not patch.changed
    assert [reason for _m, reason in patch.refused] == [
        "self.LayerNorm is used elsewhere (line 9), so its parameters cannot move into the kernel"]


def test_a_match_inside_a_function_defined_in_forward_is_found_and_not_rewritten(tmp_path):
    source = tmp_path / "m.py"
    source.write_text("import torch.nn.functional as F\nfrom torch import nn\n\n\nclass A(nn.Module):\n"
                      "    def forward(self, x):\n        def probs(scores):\n"
                      "            return F.softmax(scores, dim=-1)\n\n        return probs(x + 1)\n")
    (match,) = scan([str(source)], load_rules(["softmax"]), jobs=1).matches
    assert (match.line, match.nodes[0].function) == (8, "forward.<locals>.probs")
    patch = patch_file(source, ["softmax"])
    assert [reason for _m, reason in patch.refused] == [
        "the match is in `forward.<locals>.probs`, a function defined inside another; such matches are found, not rewritten"]
    assert not patch.changed


def test_a_forward_inherited_by_subclasses_that_build_its_layers_is_matched_for_each_and_not_rewritten(tmp_path):
    source = tmp_path / "m.py"
    source.write_text((
        "from torch import nn\n\n\nclass Block(nn.Module):\n    def forward(self, x):\n"
        "        return self.bn(self.conv(x))\n\n\n"
        "class Wide(Block):\n    def __init__(self):\n        super().__init__()\n"
        "        self.conv = nn.Conv2d(8, 8, 3)\n        self.bn = nn.BatchNorm2d(8)\n\n\n"
        "class Narrow(Block):\n    def __init__(self):\n        super().__init__()\n"
        "        self.conv = nn.Conv2d(8, 8, 1)\n        self.bn = nn.BatchNorm2d(8)\n"))
    matches = scan([str(source)], load_rules(["conv_batchnorm"]), jobs=1).matches
    # one match per subclass, each with its own constructions, at the shared forward's line
    assert sorted((m.class_, m.line, tuple(m.init_lines)) for m in matches) == [
        ("Narrow", 6, (19, 20)), ("Wide", 6, (12, 13))]
    patch = patch_file(source, ["conv_batchnorm"])
    assert sorted(reason for _m, reason in patch.refused) == [
        f"{cls} runs the `forward` it inherits from Block, which other classes may share; "
        "such matches are found, not rewritten" for cls in ("Narrow", "Wide")]
    assert not patch.changed


def test_a_layer_a_builder_returns_is_found_and_not_rewritten(tmp_path):
    """A construction that reaches its attribute through a `return` lives in a function the
    class does not own (or after the `return`, nothing runs): it is found, never edited."""
    source = tmp_path / "m.py"
    source.write_text(
        "from torch import nn\n\n\ndef make_conv(c):\n    conv = nn.Conv2d(c, c, 3)\n    return conv\n\n\n"
        "class M(nn.Module):\n    def __init__(self, c):\n        super().__init__()\n"
        "        self.conv = make_conv(c)\n        self.conv2, self.bn2 = self._pair(c)\n"
        "        self.bn = nn.BatchNorm2d(c)\n\n"
        "    def _pair(self, c):\n        return nn.Conv2d(c, c, 1), nn.BatchNorm2d(c)\n\n"
        "    def forward(self, x):\n        x = self.bn(self.conv(x))\n        return self.bn2(self.conv2(x))\n")
    matches = scan([str(source)], load_rules(["conv_batchnorm"]), jobs=1).matches
    assert sorted((m.line, tuple(m.init_lines)) for m in matches) == [(20, (5, 14)), (21, (17,))]
    patch = patch_file(source, ["conv_batchnorm"])
    assert sorted(reason for _m, reason in patch.refused) == [
        "self.conv is built at line 5 by a function that returns it; such constructions are found, not rewritten",
        "self.conv2 is built at line 17 by a function that returns it; such constructions are found, not rewritten"]
    assert not patch.changed


def test_a_match_in_an_attention_processor_is_found_and_not_rewritten(tmp_path):
    """In `Processor.__call__(self, attn, ...)`, `self` is the processor: a fused member the
    rewriter adds to the module would be called as `self.fused_...` on the wrong object."""
    source = tmp_path / "p.py"
    source.write_text(
        "from torch import nn\n\n\nclass Processor:\n    def __call__(self, attn, hidden_states, residual):\n"
        "        h = attn.dropout(hidden_states)\n        return attn.norm(h + residual)\n\n\n"
        "class Attention(nn.Module):\n    _default_processor_cls = Processor\n\n    def __init__(self):\n"
        "        super().__init__()\n        self.dropout = nn.Dropout(0.1)\n        self.norm = nn.LayerNorm(4)\n\n"
        "    def forward(self, x, r):\n        return self.processor(self, x, r)\n")
    patch = patch_file(source, ["dropout_layernorm"])
    assert [(m.line, m.class_, reason) for m, reason in patch.refused] == [
        (6, "Processor", "the match runs in Processor.__call__, an object the module calls with itself as an "
                         "argument (`self.processor(self, ...)`); such matches are found, not rewritten")]
    assert not patch.changed


def test_dpt_residual_layer_keeps_the_plain_convolution_on_the_other_branch(zoo):
    patch = patch_file(zoo / "modeling_dpt.py", ["conv_batchnorm"], modules=zoo_modules([zoo / "modeling_dpt.py"]))
    tree = ast.parse(patch.patched)
    layer = next(n for n in ast.walk(tree) if isinstance(n, ast.ClassDef) and n.name == "DPTPreActResidualLayer")
    forward = next(n for n in layer.body if isinstance(n, ast.FunctionDef) and n.name == "forward")
    branches = [n for n in forward.body if isinstance(n, ast.If)]
    assert [ast.unparse(b.test) for b in branches] == ["self.use_batch_norm"] * 2
    for index, branch in enumerate(branches, start=1):
        fused = ast.unparse(branch.body[0])
        assert fused.startswith("hidden_state = self.fused_conv_batch_norm2d") and "(hidden_state)" in fused
        assert ast.unparse(branch.orelse[0]) == f"hidden_state = self.convolution{index}(hidden_state)"
    init = next(n for n in layer.body if isinstance(n, ast.FunctionDef) and n.name == "__init__")
    guarded = next(n for n in init.body if isinstance(n, ast.If))
    assert sum("FusedConvBatchNorm2d(self.convolution" in ast.unparse(s) for s in guarded.body) == 2


def run_cli(*args, cwd):
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, "-m", "adopter.cli", *args], capture_output=True, text=True, cwd=cwd, env=env)


def test_apply_needs_a_mode(tmp_path):
    result = run_cli("apply", str(ROOT / "adopter" / "rules" / "paper" / "softmax.py"), cwd=tmp_path)
    assert result.returncode == 2 and "--diff, --check, --write or --out" in result.stderr


SELF_OUTPUT = ("from torch import nn\n\n\nclass SelfOutput(nn.Module):\n    def __init__(self, d):\n"
               "        super().__init__()\n        self.dense = nn.Linear(d, d)\n        self.LayerNorm = nn.LayerNorm(d, eps=1e-12)\n"
               "        self.dropout = nn.Dropout(0.1)\n\n    def forward(self, h, r):\n        h = self.dense(h)\n"
               "        h = self.dropout(h)\n        h = self.LayerNorm(h + r)\n        return h\n")


def test_apply_write_keeps_a_backup_only_when_asked_and_a_second_run_changes_nothing(tmp_path):
    target, other = tmp_path / "model.py", tmp_path / "plain" / "model.py"
    original = SELF_OUTPUT
    other.parent.mkdir()
    for path in (target, other):
        path.write_text(original)
    plain = run_cli("apply", str(other), "--rules", "dropout_layernorm", "--kernels", "paper", "--write", cwd=tmp_path)
    assert plain.returncode == 0 and other.read_text() != original
    assert list(other.parent.iterdir()) == [other]  # git is the usual backup: no FILE.orig unless asked
    first = run_cli("apply", str(target), "--rules", "dropout_layernorm", "--kernels", "paper", "--write", "--backup",
                    cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    patched = target.read_text()
    assert "h = self.fused_dropout_add_layer_norm(h, r)" in patched
    assert (tmp_path / "model.py.orig").read_text() == original
    second = run_cli("apply", str(target), "--rules", "dropout_layernorm", "--kernels", "paper", "--write", cwd=tmp_path)
    assert second.returncode == 0 and target.read_text() == patched
    assert "0 patches in 0 files" in second.stderr


def test_apply_diff_and_out_write_nothing_in_place(tmp_path):
    fixture = ROOT / "adopter" / "rules" / "paper" / "conv_batchnorm.py"
    before = fixture.read_text()
    result = run_cli("apply", str(fixture), "--rules", "conv_batchnorm", "--kernels", "torch", "--diff",
                     "--out", str(tmp_path / "out"), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("--- a/") and "+from adopter_kernels import FusedConvBatchNorm2d" in result.stdout
    assert (tmp_path / "out" / "conv_batchnorm.py").read_text() != before
    assert fixture.read_text() == before


def test_kernel_sets_choose_the_emitted_kernel_or_leave_the_match(tmp_path):
    fixture = tmp_path / "model.py"
    fixture.write_text(SELF_OUTPUT)
    rules = load_rules(["dropout_layernorm"])
    matches = scan([str(fixture)], rules, jobs=1, cache_dir=None, layout=True).matches
    by_set = {k: patch_source(str(fixture), SELF_OUTPUT, matches, {r.key: r for r in rules}, k)
              for k in ("paper", "torch", "default")}
    assert "from epoi.ops.torchscript_ops import FusedDropoutAddLayerNorm" in by_set["paper"].patched
    assert "from adopter_kernels import DropoutAddLayerNorm" in by_set["torch"].patched
    assert by_set["paper"].applied and len(by_set["torch"].applied) == len(by_set["paper"].applied)
    # the default set leaves out what the benchmark did not show to help, and says why
    assert by_set["default"].patched == fixture.read_text() and by_set["default"].applied == []
    assert {reason for _, reason in by_set["default"].refused} == {
        "left out of the default kernel set: its one expression is fused only by torch.compile; in eager mode "
        "it runs the same kernels as the original (figures: docs/benchmarks.md)"}


def test_swiglu_is_rewritten_by_the_torch_set_and_left_out_of_default_until_a_gpu_measures_it():
    fixture = FIXTURES["swiglu"]
    rules = load_rules(["swiglu"])
    matches = scan([str(fixture)], rules, jobs=1, cache_dir=None, layout=True).matches
    by_set = {k: patch_source(str(fixture), fixture.read_text(), matches, {r.key: r for r in rules}, k)
              for k in ("torch", "default")}
    # every shape (swiglu.adopt and swiglu.*.adopt) but the exact-GELU and weight-product ones, which
    # are detect-only, and but projections a builder function returns (found, not rewritten)
    by_key = {r.key: r for r in rules}
    detect_only = [m for m in matches if by_key[m.rule_key].detect_only]
    built = [m for m, reason in by_set["torch"].refused if "by a function that returns it" in reason]
    assert len(detect_only) == 6 and len(built) == 1
    assert len(by_set["torch"].applied) == len(matches) - len(detect_only) - len(built) == 14
    assert "from adopter_kernels import gated_act, gated_act_mul, gated_silu, silu_mul" in by_set["torch"].patched
    assert by_set["default"].applied == [] and not by_set["default"].changed
    assert {reason for m, reason in by_set["default"].refused if not by_key[m.rule_key].detect_only and m not in built} == {
        "left out of the default kernel set: not measured on a GPU yet (its fused kernel, Liger-Kernel's, "
        "runs on CUDA only; elsewhere it runs the original ops)"}


@pytest.mark.parametrize(("rule_id", "kernel", "reason"), [
    ("rotary", "apply_rotary", "not measured on a GPU yet (its fused kernel, Liger-Kernel's RoPE, runs on CUDA only; "
                               "elsewhere it runs the original ops)"),
    ("groupnorm_silu", "group_norm_silu", "slower on a GPU: Liger-Kernel's group norm took longer than PyTorch's, "
                                          "forward and backward (figures: docs/benchmarks.md)")])
def test_the_payoff_kernels_are_in_the_torch_set_and_left_out_of_default(rule_id, kernel, reason):
    fixture = FIXTURES[rule_id]
    rules = load_rules([rule_id])
    matches = scan([str(fixture)], rules, jobs=1, cache_dir=None, layout=True).matches
    by_set = {k: patch_source(str(fixture), fixture.read_text(), matches, {r.key: r for r in rules}, k)
              for k in ("torch", "default")}
    # (rotary's interleaved and matrix shapes are detect-only: refused by every set; a rotation built
    # by statements before the products (twice), which the rewriter cannot fold, and one in a method
    # of a class the base's forward runs, which other subclasses may share, are refused with their reasons)
    by_key = {r.key: r for r in rules}
    detect_only = [m for m in matches if by_key[m.rule_key].detect_only]
    unfolded = {"rotary": 1, "groupnorm_silu": 0}[rule_id]
    assert len(by_set["torch"].applied) == len(matches) - len(detect_only) - unfolded == {"rotary": 9, "groupnorm_silu": 6}[rule_id]
    imported = by_set["torch"].patched.split("from adopter_kernels import ", 1)[1].split("\n", 1)[0].split("  #", 1)[0]
    assert kernel in imported.split(", ")
    assert by_set["default"].applied == [] and not by_set["default"].changed
    assert {why for m, why in by_set["default"].refused if not by_key[m.rule_key].detect_only and not m.inherited} == {
        f"left out of the default kernel set: {reason}"}


def test_fused_linear_cross_entropy_is_found_and_never_rewritten():
    # transformers returns the logits: the rule lets them be read elsewhere (`reads: allowed`), detect-only
    patch = patch_file(FIXTURES["fused_linear_cross_entropy"], ["fused_linear_cross_entropy"])
    assert not patch.changed and patch.applied == []
    assert [reason for _, reason in patch.refused] == ["the rule is detect-only"] * 7


def test_rotary_leaves_rotate_half_alone_and_each_caller_gets_the_kernel():
    # rotate_half is shared by every match (and by the matches the rule does not take): kept as written
    patch = patch_file(FIXTURES["rotary"], ["rotary"])
    assert patch.patched.count("def rotate_half(x):") == 1
    assert "    return torch.cat((-x2, x1), dim=-1)\n" in patch.patched
    # the import and 8 calls: one with the rotated term first, two whose rotation a statement
    # builds from the halves (`rotated = torch.cat((-x2, x1), dim=-1)`, removed with the products)
    assert patch.patched.count("apply_rotary(") == 9
    assert patch.patched.count("rotated = torch.cat(") == patch.original.count("rotated = torch.cat(") - 1
    assert sorted((m.shape, reason) for m, reason in patch.refused if not m.inherited) == sorted(
        [("interleaved", "the rule is detect-only")] * 5 + [("matrix", "the rule is detect-only")]
        + [("complex", "the rule is detect-only")])


def test_a_node_is_fused_by_one_match_the_one_that_fuses_more(tmp_path):
    # transformers 5.x's LlamaMLP: `bias=config.mlp_bias`, so bias_gelu finds `act(gate(x))` too,
    # inside swiglu's `act(gate(x)) * up(x)`; both rewritten, the outer call would drop the inner edit
    source = tmp_path / "m.py"
    source.write_text("from torch import nn\nfrom transformers.activations import ACT2FN\n\n\n"
                      "class MLP(nn.Module):\n    def __init__(self, config):\n        super().__init__()\n"
                      "        self.gate_proj = nn.Linear(4, 8, bias=config.mlp_bias)\n"
                      "        self.up_proj = nn.Linear(4, 8, bias=config.mlp_bias)\n"
                      "        self.act_fn = ACT2FN[config.hidden_act]\n\n"
                      "    def forward(self, x):\n        return self.act_fn(self.gate_proj(x)) * self.up_proj(x)\n")
    rules = load_rules(["bias_gelu", "swiglu"])
    matches = scan([str(source)], rules, jobs=1, cache_dir=None, layout=True).matches
    assert sorted(m.rule for m in matches) == ["bias_gelu", "swiglu"]
    patch = patch_source(str(source), source.read_text(), matches, {r.key: r for r in rules}, "torch")
    assert [m.rule for m in patch.applied] == ["swiglu"]
    assert [(m.rule, reason) for m, reason in patch.refused] == [
        ("bias_gelu", "it shares nodes with the swiglu match at line 13, which fuses more of them (or comes first)")]
    assert "linear_bias_act" not in patch.patched
    assert "return gated_act(self.gate_proj, self.up_proj, self.act_fn, x)" in patch.patched


def test_apply_uses_the_default_kernel_set_and_rejects_unknown_sets(tmp_path):
    fixture = ROOT / "adopter" / "rules" / "paper" / "gpt2_attention.py"
    result = run_cli("apply", str(fixture), "--rules", "gpt2_attention", "--diff", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "+from adopter_kernels.attention import GPT2AttentionSDPA" in result.stdout
    rms = run_cli("apply", str(ROOT / "adopter" / "rules" / "modern" / "rms_norm.py"), "--rules", "rms_norm", "--diff",
                  cwd=tmp_path)
    assert rms.returncode == 0 and rms.stdout == ""
    summary = [line for line in rms.stderr.splitlines() if "left out of the default kernel set" in line]
    assert len(summary) == 1 and summary[0].startswith("rms_norm: ") and "`--kernels torch` rewrites them" in summary[0]
    unknown = run_cli("apply", str(fixture), "--kernels", "cuda", "--diff", cwd=tmp_path)
    assert unknown.returncode == 2 and "unknown kernel set 'cuda'" in unknown.stderr


def test_save_original_names_is_emitted_only_when_asked(tmp_path):
    fixture = tmp_path / "model.py"
    fixture.write_text(SELF_OUTPUT)
    rules = load_rules(["dropout_layernorm"])
    matches = scan([str(fixture)], rules, jobs=1, cache_dir=None, layout=True).matches
    plain = patch_source(str(fixture), SELF_OUTPUT, matches, {r.key: r for r in rules}, "torch")
    asked = patch_source(str(fixture), SELF_OUTPUT, matches, {r.key: r for r in rules}, "torch", True)
    assert "load_renamed(self, {" in plain.patched and "save_original" not in plain.patched
    assert "}, save_original=True)" in asked.patched
    assert plain.patched.replace("})\n", "}, save_original=True)\n") == asked.patched


def _applied_again(files: list[Path], copy_to, kernels: str, names=None) -> list:
    """Patch `files` with every rule and `kernels`, write each changed file with `copy_to(path)`,
    patch the copies again: what the second pass still changes (nothing, if one decision per
    location holds). `names(files)` gives the files' module names (default: their packages')."""
    from adopter.api.apply import plan_patches
    from adopter.api.options import ModuleNames

    names = names or (lambda _files: ModuleNames())
    rules = load_rules()
    first = plan_patches([str(f) for f in files], rules, kernels=kernels, modules=names(files))
    assert first.failed == 0 and first.applied > 0
    again = []
    for patch in first.patches:
        if patch.changed:
            copy = copy_to(Path(patch.path))
            copy.write_text(patch.patched)
            again.append(str(copy))
    second = plan_patches(again, rules, kernels=kernels, modules=names(again))
    assert second.failed == 0
    return [(Path(p.path).name, [(m.rule, m.line) for m in p.applied]) for p in second.patches if p.changed]


# zoo files with a match of every paper rule between them, guarded rewrites (bert, dpt) and guard
# conflicts (reformer), patched with the `torch` set; the layout decides idempotence and the set
# only names the kernel, so the other sets run on a file or two where they rewrite something
ZOO_SAMPLES = {"torch": ["bert", "gpt2", "dpt", "reformer", "resnet", "bloom"], "default": ["bert"],
               "paper": ["dpt", "bloom"]}


def _zoo_copy(folder: Path):
    folder.mkdir(exist_ok=True)
    return lambda path: folder / path.name


@pytest.mark.parametrize("kernels", sorted(ZOO_SAMPLES))
def test_applying_twice_changes_nothing_on_a_zoo_sample(zoo, tmp_path, kernels):
    """One decision per location, the same on every pass: zoo files patched once with every
    rule, then patched again, are left as they are (a match the first pass refused for
    overlapping a guarded rewrite is refused again, inside the original it kept). The whole
    zoo runs once, in the corpus tier."""
    files = [zoo / f"modeling_{m}.py" for m in ZOO_SAMPLES[kernels]]
    assert _applied_again(files, _zoo_copy(tmp_path / "once"), kernels, zoo_modules) == []


@pytest.mark.corpus
def test_applying_twice_changes_nothing_on_the_zoo(zoo, tmp_path):
    assert _applied_again(sorted(zoo.glob("modeling_*.py")), _zoo_copy(tmp_path / "once"), "torch", zoo_modules) == []


def _package_copy(tmp_path: Path):
    """Where a modern file's patched copy goes: the same path below a corpus folder of the
    same name (which names the module, against which relative imports resolve)."""
    def copy_to(original: Path) -> Path:
        original = original.resolve()
        root = corpus_root(original)
        copy = tmp_path / original.relative_to(root.parent)
        copy.parent.mkdir(parents=True, exist_ok=True)
        assert corpus_modules([copy]).of(copy) == corpus_modules([original]).of(original)
        return copy
    return copy_to


MODERN_SAMPLES = {"torch": {"modeling_starcoder2.py", "modeling_roformer.py", "modeling_chameleon.py",
                             "modeling_lxmert.py", "hgnet.py", "activations.py", "autoencoder_kl_ltx.py"},
                  "default": {"modeling_lxmert.py"}, "paper": {"modeling_starcoder2.py", "activations.py"}}


@pytest.mark.parametrize("kernels", sorted(MODERN_SAMPLES))
def test_applying_twice_changes_nothing_on_a_modern_sample(modern_sample, tmp_path, kernels):
    """The same on today's code, a few files of the modern sample."""
    files = [f for f in modern_sample if f.name in MODERN_SAMPLES[kernels]]
    assert {f.name for f in files} == MODERN_SAMPLES[kernels]
    assert _applied_again(files, _package_copy(tmp_path), kernels, corpus_modules) == []


@pytest.mark.corpus
def test_applying_twice_changes_nothing_on_the_modern_sample(modern_sample, tmp_path):
    assert _applied_again(modern_sample, _package_copy(tmp_path), "torch", corpus_modules) == []


# forward bodies where the fused kernel would remove `x` (the Dropout's output) but the code
# still reads it, or where the analyses cannot tell: `adopter apply` must leave them all alone
REMOVED_VALUE_STILL_NEEDED = {
    "read_in_case": "x = self.dropout(h)\nout = self.LayerNorm(x + r)\nmatch self.mode:\n"
                    "    case 'drop':\n        return out, x\n    case _:\n        return out",
    "read_in_case_guard": "x = self.dropout(h)\nout = self.LayerNorm(x + r)\nmatch self.mode:\n"
                          "    case 'drop' if x is not None:\n        return out\n    case _:\n        return out",
    "read_by_closure": "x = self.dropout(h)\nout = self.LayerNorm(x + r)\ndef dropped():\n    return x\n"
                       "return out, dropped()",
    "read_by_closure_defined_first": "def dropped():\n    return x\nx = self.dropout(h)\nout = self.LayerNorm(x + r)\n"
                                     "return out, dropped()",
    "walrus_read_later": "out = self.LayerNorm((x := self.dropout(h)) + r)\nreturn out, x",
    "comprehension_shadows": "x = self.dropout(h)\nreturn [self.LayerNorm(x + r) for x in r]",
    "deleted": "x = self.dropout(h)\nout = self.LayerNorm(x + r)\ndel x\nreturn out",
    "read_in_handler": "try:\n    x = self.dropout(h)\n    out = self.LayerNorm(x + r)\nexcept RuntimeError:\n"
                       "    return x\nreturn out",
    "empty_loop": "x = self.dropout(h)\nout = self.LayerNorm(x + r)\nfor x in r:\n    pass\nreturn out, x",
    "raise_from": "x = self.dropout(h)\nout = self.LayerNorm(x + r)\nif out is None:\n    raise ValueError() from x\n"
                  "return out",
    "global": "global COUNT\nCOUNT = 1\nx = self.dropout(h)\nreturn self.LayerNorm(x + r)",
    "nonlocal": "n = 0\ndef count():\n    nonlocal n\n    n += 1\ncount()\nx = self.dropout(h)\nreturn self.LayerNorm(x + r)",
}


def _block_module(body: str) -> str:
    return ("from torch import nn\n\n\nclass Block(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
            "        self.LayerNorm = nn.LayerNorm(4)\n        self.dropout = nn.Dropout(0.1)\n\n"
            "    def forward(self, h, r):\n" + "".join(f"        {line}\n" if line else "\n" for line in body.splitlines()))


def test_apply_leaves_a_fusion_alone_when_a_statement_still_needs_the_removed_value(tmp_path):
    for name, body in REMOVED_VALUE_STILL_NEEDED.items():
        (tmp_path / f"{name}.py").write_text(_block_module(body))
    (tmp_path / "control.py").write_text(_block_module("x = self.dropout(h)\nout = self.LayerNorm(x + r)\nreturn out"))
    result = run_cli("apply", str(tmp_path), "--rules", "dropout_layernorm", "--kernels", "torch", "--diff", "--no-cache",
                     cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    patched = [line[len("--- a/"):] for line in result.stdout.splitlines() if line.startswith("--- a/")]
    assert [Path(p).name for p in patched] == ["control.py"]
    warnings = sorted(line.split(": ", 1)[1] for line in result.stderr.splitlines() if ": warning: " in line)
    assert warnings == ["warning: `global` statement not modelled: no rewrite in Block.forward",
                        "warning: `nonlocal` statement not modelled: no rewrite in Block.forward"]


def test_a_match_scanned_without_its_layout_is_not_rewritten():
    """The rewriter edits from the layout relations (datalog/match/layout.lp); a scan that
    did not compute them gives matches it must not rewrite from guesses."""
    fixture = FIXTURES["bias_gelu"]
    rules = load_rules(["bias_gelu"])
    bare = scan([str(fixture)], rules, jobs=1, cache_dir=None).matches
    assert bare and all(m.layout is None for m in bare)
    with pytest.raises(ValueError, match="no layout"):
        patch_source(str(fixture), fixture.read_text(), bare, {r.key: r for r in rules})


# one hand-written RMSNorm: the torch set rewrites it (adopter_kernels.rms_normalize)
RMS_MODEL = ("import torch\nfrom torch import nn\n\n\nclass M(nn.Module):\n"
             "    def forward(self, x):\n        v = x.pow(2).mean(-1, keepdim=True)\n"
             "        return x * torch.rsqrt(v + 1e-06)\n")


def test_out_and_patches_keep_the_files_of_two_folders_apart(tmp_path):
    """`apply a b --out OUT` wrote a/m.py and b/m.py both to OUT/m.py, b's last: each file now
    keeps its path below the arguments' common folder."""
    for folder in ("a", "b"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "m.py").write_text(RMS_MODEL.replace("1e-06", f"1e-0{len(folder) + 5}"))
    result = run_cli("apply", "a", "b", "--rules", "rms_norm", "--kernels", "torch", "--out", "OUT", "--patches", "P",
                     "--no-cache", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert sorted(str(p.relative_to(tmp_path / "OUT")) for p in (tmp_path / "OUT").rglob("*.py")) == ["a/m.py", "b/m.py"]
    assert sorted(str(p.relative_to(tmp_path / "P")) for p in (tmp_path / "P").rglob("*.diff")) == ["a/m.diff", "b/m.diff"]
    assert "rms_normalize" in (tmp_path / "OUT" / "a" / "m.py").read_text()
    # one folder argument is its own base, as before
    one = run_cli("apply", "a", "--rules", "rms_norm", "--kernels", "torch", "--out", "ONE", "--no-cache", cwd=tmp_path)
    assert one.returncode == 0 and [p.name for p in (tmp_path / "ONE").iterdir()] == ["m.py"]


def test_copy_all_writes_a_complete_tree(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "m.py").write_text(RMS_MODEL)
    (tmp_path / "pkg" / "data.json").write_text("{}")
    result = run_cli("apply", "pkg", "--rules", "rms_norm", "--kernels", "torch", "--out", "OUT", "--copy-all",
                     "--no-cache", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert sorted(p.name for p in (tmp_path / "OUT").iterdir()) == ["__init__.py", "data.json", "m.py"]
    assert "rms_normalize" in (tmp_path / "OUT" / "m.py").read_text()


def test_a_patch_is_read_back_from_the_cache_until_the_file_changes(tmp_path, monkeypatch):
    """`apply` after `apply` (a preview, then the write) rewrites nothing twice: the patch of a
    file whose bytes, matches, rules and kernel set are unchanged is the cache's, with its
    refusals; a changed file is patched again."""
    import adopter.api.apply as apply_api

    source = tmp_path / "m.py"
    # (the RMSNorm is rewritten, the softmax refused: the torch set does not rewrite the op the code runs)
    source.write_text(RMS_MODEL.replace("return x * torch.rsqrt(v + 1e-06)",
                                        "return x * torch.rsqrt(v + 1e-06) + torch.softmax(x, dim=-1)"))
    rules, cache = load_rules(["rms_norm", "softmax"]), tmp_path / "cache"
    calls = []

    def counted(task):
        calls.append(task.path)
        return patch_file_of_task(task)

    patch_file_of_task = apply_api.patch_file
    monkeypatch.setattr(apply_api, "patch_file", counted)
    first = apply_api.plan_patches([str(source)], rules, jobs=1, cache_dir=cache, kernels="torch")
    again = apply_api.plan_patches([str(source)], rules, jobs=1, cache_dir=cache, kernels="torch")
    assert calls == [str(source)]
    (one,), (two,) = first.patches, again.patches
    assert one.changed and (two.original, two.patched, two.encoding) == (one.original, one.patched, one.encoding)
    assert [(m.rule, m.line) for m in two.applied] == [(m.rule, m.line) for m in one.applied] == [("rms_norm", 7)]
    assert [reason for _, reason in two.refused] == [reason for _, reason in one.refused] != []
    apply_api.plan_patches([str(source)], rules, jobs=1, cache_dir=cache, kernels="default")  # another set: patched
    source.write_text(source.read_text() + "# changed\n")
    apply_api.plan_patches([str(source)], rules, jobs=1, cache_dir=cache, kernels="torch")
    assert len(calls) == 3


def test_the_comments_at_the_ends_of_folded_lines_stay_on_the_resulting_line(tmp_path):
    """A rewrite that folds statements into one keeps their end-of-line comments, in the order
    of the lines, on the line that results; the comments above them stay above it."""
    source = tmp_path / "mlp.py"
    source.write_text(
        "import torch.nn.functional as F\nfrom torch import nn\n\n\nclass MLP(nn.Module):\n"
        "    def __init__(self):\n        super().__init__()\n        self.fc_1 = nn.Linear(4, 8)\n"
        "        self.fc_2 = nn.Linear(4, 8)\n\n    def forward(self, x):\n        # the projections\n"
        "        x_fc_1 = self.fc_1(x)  # gate: (B, T, H)\n        x_fc_2 = self.fc_2(x)  # up: (B, T, H)\n"
        "        return F.silu(x_fc_1) * x_fc_2\n")
    from adopter.rules.registry import load_rules
    rules = load_rules(["swiglu"])
    matches = scan([str(source)], rules, jobs=1, layout=True).matches
    patch = patch_source(str(source), source.read_text(), matches, {r.key: r for r in rules}, "torch")
    assert patch.applied
    body = patch.patched.split("def forward(self, x):\n")[1]
    assert body == ("        # the projections\n"
                    "        return gated_silu(self.fc_1, self.fc_2, x)  # gate: (B, T, H)  # up: (B, T, H)\n")


def test_a_kernel_in_a_module_the_file_imports_is_named_through_that_import(tmp_path):
    """`import torch.nn.functional as F` makes the tanh-GELU rewrite `F.gelu(...)`, with no new
    import; a file without it gets one."""
    from adopter.rules.registry import load_rules

    rules = load_rules(["tanh_gelu"])
    body = ("class InForward(nn.Module):\n    def forward(self, x):\n"
            "        return x * 0.5 * (1.0 + torch.tanh(0.79788456 * x * (1 + 0.044715 * x * x)))\n")
    for imports, call, added in (("import torch\nimport torch.nn.functional as F\nfrom torch import nn\n\n\n", "F.gelu", False),
                                 ("import torch\nfrom torch import nn\n\n\n", "gelu", True)):
        source = tmp_path / "gelu.py"
        source.write_text(imports + body)
        matches = scan([str(source)], rules, jobs=1, layout=True, cache_dir=None).matches
        patch = patch_source(str(source), source.read_text(), matches, {r.key: r for r in rules}, "torch")
        assert f"return {call}(x, approximate='tanh')" in patch.patched
        assert ("from torch.nn.functional import gelu" in patch.patched) == added


def test_a_patch_and_its_cache_key_come_from_one_read_of_the_file(tmp_path, monkeypatch):
    """The file is read once for its key and its patch: a file changed between two reads could
    otherwise have its patch stored under the key of the bytes before."""
    import adopter.api.apply as apply_api

    source = tmp_path / "m.py"
    source.write_text(RMS_MODEL)
    reads = []

    def counted(path):
        reads.append(path)
        return real_read(path)

    real_read = apply_api.read_bytes
    monkeypatch.setattr(apply_api, "read_bytes", counted)
    report = apply_api.plan_patches([str(source)], load_rules(["rms_norm"]), jobs=1, cache_dir=tmp_path / "cache",
                                    kernels="torch")
    assert report.applied == 1 and reads == [source]


def test_no_kernel_set_rewrites_a_softmax_to_the_softmax_it_already_runs():
    """The paper's softmax target is xFormers' Triton kernel; its only PyTorch counterpart is the op
    the code calls, so the torch and default sets leave the match, saying why (issue 53, item 4)."""
    fixture = ROOT / "adopter" / "rules" / "paper" / "softmax.py"
    rules = load_rules(["softmax"])
    matches = scan([str(fixture)], rules, jobs=1, cache_dir=None, layout=True).matches
    assert matches
    for kernels in ("torch", "default"):
        patch = patch_source(str(fixture), fixture.read_text(), matches, {r.key: r for r in rules}, kernels)
        assert not patch.applied and not patch.changed
        assert {reason for _, reason in patch.refused} == {
            "PyTorch's softmax is the op the code already runs: no kernel set rewrites it to itself (the paper's "
            "target is xFormers' Triton softmax, `--kernels paper`)"}
    paper = patch_source(str(fixture), fixture.read_text(), matches, {r.key: r for r in rules}, "paper")
    assert paper.applied and "xformers.triton.softmax" in paper.patched
