"""evaluation/bench/batch_ground.py: with `--check`, several files grounded at once give each
file the atoms it gets alone. What a ground costs is measured by the bench, never here."""

from __future__ import annotations

from evaluation.bench import batch_ground


def test_files_grounded_together_get_the_atoms_each_gets_alone(tmp_path):
    (tmp_path / "a.py").write_text(
        "import torch.nn as nn\n\n\nclass A(nn.Module):\n"
        "    def __init__(self):\n        super().__init__()\n"
        "        self.dense = nn.Linear(4, 4)\n        self.dropout = nn.Dropout(0.1)\n"
        "        self.norm = nn.LayerNorm(4)\n\n"
        "    def forward(self, x, residual):\n"
        "        return self.norm(self.dropout(self.dense(x)) + residual)\n")
    (tmp_path / "b.py").write_text(
        "import torch\n\n\nclass B(torch.nn.Module):\n"
        "    def forward(self, x):\n        return torch.nn.functional.softmax(x, dim=-1)\n")
    result = batch_ground.measure(sorted(tmp_path.glob("*.py")), check=True)
    assert result["files"] == 2 and result["atoms_compared"] > 0
    assert result["differing_files"] == []
    assert result["single_ms"] > 0 and result["batch_ms"] > 0
