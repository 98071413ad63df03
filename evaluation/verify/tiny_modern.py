"""Per-model exceptions for tiny random models of today's code (transformers 5.23.0, the
modern sample: evaluation/modern/sample.tsv), used by `tiny.py` when the installed
transformers is 5.x (`.venv-verify5`, `make verify5-setup`). Keys are the file's model id
(`modeling_<id>.py`), which may differ from its package (`data2vec_text` in `data2vec`).
"""

from __future__ import annotations

from typing import Any

import torch

from evaluation.verify.tiny import BATCH, HIDDEN, IMAGE, SEQ, Override, ids, pixels

OVERRIDES: dict[str, Override] = {
}
