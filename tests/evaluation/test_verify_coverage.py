"""Static bookkeeping of `make verify` (evaluation/verify/coverage.py): which patch added
which line, which model classes can reach it, which config values enter its branch."""

from __future__ import annotations

import textwrap

from evaluation.verify.coverage import added_lines, assign, covering_classes, guard_settings

SOURCE = textwrap.dedent('''\
    class FooPreTrainedModel(PreTrainedModel):
        def _init_weights(self, module):
            if isinstance(module, (Head, Dead)):
                pass

    class Layer(nn.Module):
        def __init__(self, config):
            self.use_gate = config.use_gate
            self.act = ACT2FN[config.hidden_act]

        def forward(self, x):
            if self.config.extra and not self.use_gate:
                x = x + 1
            if self.config.mode == "fast":
                x = x * 2
            return x

    class Head(nn.Module):
        pass

    class Dead(nn.Module):
        pass

    class FooModel(FooPreTrainedModel):
        def __init__(self, config):
            self.layer = Layer(config)

    class FooForMaskedLM(FooPreTrainedModel):
        def __init__(self, config):
            self.model = FooModel(config)
            self.head = Head(config)
''')


def line_of(text: str) -> int:
    return next(i for i, line in enumerate(SOURCE.splitlines(), 1) if text in line)


def test_added_lines_know_their_class_and_original_place():
    patched = SOURCE.replace("x = x + 1", "x = fused(x)\n            y = 0")
    lines = added_lines(SOURCE, patched)
    assert [(a.line, a.cls) for a in lines] == [(line_of("x = x + 1"), "Layer"), (line_of("x = x + 1") + 1, "Layer")]
    assert all(a.original_line == line_of("x = x + 1") for a in lines)


def test_imports_and_comments_are_not_added_lines():
    patched = "from kernels import fused\n# note\n" + SOURCE
    assert added_lines(SOURCE, patched) == []


def test_lines_go_to_the_nearest_patch_of_their_class():
    patched = SOURCE.replace("x = x + 1", "x = fused(x)").replace("x = x * 2", "x = fused2(x)")
    lines = added_lines(SOURCE, patched)
    owned = assign(lines, [("Layer", line_of("x = x + 1")), ("Layer", line_of("x = x * 2")), ("Head", 1)])
    assert owned == {0: [line_of("x = x + 1")], 1: [line_of("x = x * 2")], 2: []}


def test_lines_of_module_level_functions_go_to_the_nearest_patch_there():
    source = "def f(x):\n    return a(x)\n\n\ndef g(x):\n    return b(x)\n"
    patched = source.replace("a(x)", "fa(x)").replace("b(x)", "fb(x)")
    owned = assign(added_lines(source, patched), [("-", 2), ("-", 6), ("Head", 9)])
    assert owned == {0: [2], 1: [6], 2: []}


def test_covering_classes_follow_construction_not_the_base_class():
    # every model class mentions the base class, whose _init_weights names Head and Dead
    assert covering_classes(SOURCE, {"Head"}) == ["FooForMaskedLM"]
    assert covering_classes(SOURCE, {"Layer"}) == ["FooModel", "FooForMaskedLM"]
    assert covering_classes(SOURCE, {"Dead"}) == []


def test_guard_settings_read_config_tests():
    assert guard_settings(SOURCE, line_of("x = x + 1")) == {"extra": True, "use_gate": False}
    assert guard_settings(SOURCE, line_of("x = x * 2")) == {"mode": "fast"}
    assert guard_settings(SOURCE, line_of("return x")) == {}
