"""The README's examples are what the tool prints: the rules table, the example diff."""

import re
from pathlib import Path

from typer.testing import CliRunner

from adopter.api.rules import rules_markdown
from adopter.cli.app import app

README = Path(__file__).resolve().parents[2] / "README.md"

MLP = '''import torch.nn.functional as F
from torch import nn


class MLP(nn.Module):
    def __init__(self, dim, hidden):
        super().__init__()
        self.gate_proj = nn.Linear(dim, hidden, bias=False)
        self.up_proj = nn.Linear(dim, hidden, bias=False)
        self.down_proj = nn.Linear(hidden, dim, bias=False)

    def forward(self, x):
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))
'''


def test_the_rules_table_is_generated_from_the_rule_headers():
    text = README.read_text()
    table = text.split("<!-- rules table: adopter rules list --markdown -->\n", 1)[1].split("<!-- end of rules table -->", 1)[0]
    assert table == rules_markdown(), "regenerate the README's table: adopter rules list --markdown"


def test_the_example_diff_is_what_apply_prints(tmp_path, monkeypatch):
    (tmp_path / "mlp.py").write_text(MLP)
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(app, ["apply", "mlp.py", "--kernels", "torch", "--diff", "--no-cache", "-j", "1"])
    assert result.exit_code == 0, result.output
    shown = re.search(r"```diff\n\$ adopter apply mlp.py --kernels torch --diff\n(.*?)```", README.read_text(), re.S)
    assert shown and shown.group(1) == result.stdout
