"""adopter/catalogue/torch.tsv, inputs/torch.tsv and constructors/torch.tsv are what
evaluation/torch_catalogue.py makes of the pinned torch.

Needs torch, which lives in `.venv-verify` (`make test-verify`); skipped in the main
environment, where the rule checker reads the committed file only.
"""

from __future__ import annotations

import pytest

pytest.importorskip("torch", reason="torch lives in .venv-verify: run `make test-verify`")

from evaluation.torch_catalogue import CONSTRUCTORS_OUT, INPUTS_OUT, OUT, render, render_constructors, render_inputs  # noqa: E402


def test_the_committed_catalogue_equals_a_fresh_generation():
    assert OUT.read_text(encoding="utf-8") == render(), "regenerate it: make catalogue"


def test_the_committed_input_positions_equal_a_fresh_generation():
    assert INPUTS_OUT.read_text(encoding="utf-8") == render_inputs(), "regenerate it: make catalogue"
    rows = INPUTS_OUT.read_text(encoding="utf-8").splitlines()
    assert "torch.nn.functional.softmax\tinput\t0\t" in rows and "torch.nn.Linear\tinput\t0\t" in rows
    assert "torch.nn.functional.normalize\tp\t1\t2.0" in rows  # a literal default


def test_the_committed_constructor_parameters_equal_a_fresh_generation():
    assert CONSTRUCTORS_OUT.read_text(encoding="utf-8") == render_constructors(), "regenerate it: make catalogue"
    rows = CONSTRUCTORS_OUT.read_text(encoding="utf-8").splitlines()
    assert "torch.nn.LayerNorm\tnormalized_shape\t0" in rows and "torch.nn.Dropout\tp\t0" in rows
