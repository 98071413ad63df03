"""adopter/rules/catalogue/torch.tsv is what evaluation/torch_catalogue.py makes of the pinned torch.

Needs torch, which lives in `.venv-verify` (`make test-verify`); skipped in the main
environment, where the rule checker reads the committed file only.
"""

from __future__ import annotations

import pytest

pytest.importorskip("torch", reason="torch lives in .venv-verify: run `make test-verify`")

from evaluation.torch_catalogue import OUT, render  # noqa: E402


def test_the_committed_catalogue_equals_a_fresh_generation():
    assert OUT.read_text(encoding="utf-8") == render(), "regenerate it: make catalogue"
