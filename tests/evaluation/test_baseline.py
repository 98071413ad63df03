"""The ast-grep baseline (evaluation/baseline): its rules and the mapping of hits to
locations, on small synthetic model files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evaluation.astgrep_baseline.run import RULES, enclosing_class, find_ast_grep, main, run_baseline
from evaluation.groundtruth.merge_parts import RULE_ORDER

AST_GREP = find_ast_grep()
pytestmark = pytest.mark.skipif(
    AST_GREP is None, reason="ast-grep binary not installed (pip install ast-grep-cli, see evaluation/astgrep_baseline/README.md)")

TOY = '''\
import torch
from torch import nn


class ToySelfOutput(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.dense = nn.Linear(4, 4)
        self.LayerNorm = nn.LayerNorm(4)
        self.dropout = nn.Dropout(0.1)

    def forward(self, hidden_states, input_tensor):
        hidden_states = self.dense(hidden_states)
        hidden_states = self.dropout(hidden_states)
        hidden_states = self.LayerNorm(hidden_states + input_tensor)
        return hidden_states


class ToyAttention(nn.Module):
    def forward(self, scores):
        probs = nn.functional.softmax(scores, dim=-1)
        return probs


class ToyConv(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3)
        self.other = nn.Conv2d(8, 8, 1)
        self.bn = nn.BatchNorm2d(8)

    def forward(self, x):
        h = self.other(x)
        y = self.conv(x)
        y = self.bn(y)
        return y + h


def helper(x):
    return nn.functional.softmax(x, dim=0)
'''

PLAIN = '''\
import torch


class NoKernels(torch.nn.Module):
    def forward(self, x):
        y = torch.softmax(x, dim=-1)  # another global; the softmax rule is nn.functional.softmax
        return x.relu() + y
'''


@pytest.fixture()
def toy_zoo(tmp_path: Path) -> Path:
    zoo = tmp_path / "zoo"
    zoo.mkdir()
    (zoo / "modeling_toy.py").write_text(TOY)
    (zoo / "modeling_plain.py").write_text(PLAIN)
    return zoo


def test_every_rule_has_a_file_naming_its_example():
    for rule in RULE_ORDER:
        text = (RULES / f"{rule}.yml").read_text()
        assert f"id: {rule}\n" in text
        assert "# Written from one example:" in text


def test_locations_on_synthetic_files(toy_zoo: Path):
    rows = run_baseline(toy_zoo)
    toy = str(toy_zoo / "modeling_toy.py")
    assert rows == [
        {"rule": "dropout_layernorm", "file": toy, "class": "ToySelfOutput", "line": 14},
        {"rule": "softmax", "file": toy, "class": "ToyAttention", "line": 21},
        {"rule": "conv_batchnorm", "file": toy, "class": "ToyConv", "line": 34},
        {"rule": "softmax", "file": toy, "class": "-", "line": 40},
    ]
    assert not [r for r in rows if r["file"].endswith("modeling_plain.py")]


def test_enclosing_class_is_innermost(tmp_path: Path):
    source = tmp_path / "nested.py"
    source.write_text("class Outer:\n    class Inner:\n        x = 1\n    y = 2\nz = 3\n")
    assert [enclosing_class(str(source), line) for line in (1, 3, 4, 5)] == ["Outer", "Inner", "Outer", "-"]


def test_main_writes_matches_and_table(toy_zoo: Path, tmp_path: Path, capsys):
    out = tmp_path / "eval"
    assert main(["--zoo", str(toy_zoo), "--out", str(out)]) == 0
    lines = (out / "baseline_matches.jsonl").read_text().splitlines()
    assert [json.loads(line)["line"] for line in lines] == [14, 21, 34, 40]
    table = (out / "baseline.tsv").read_text().splitlines()
    assert table[0] == "rule\tgt\ttp\tfp\tfn\tprecision\trecall"
    assert [row.split("\t")[0] for row in table[1:]] == RULE_ORDER + ["total"]
    softmax = dict(zip(table[0].split("\t"), table[1 + RULE_ORDER.index("softmax")].split("\t")))
    assert (softmax["tp"], softmax["fp"]) == ("0", "2")  # toy files are not in the ground truth
    assert "total" in capsys.readouterr().out


def test_missing_zoo_is_a_one_line_error(tmp_path: Path, capsys):
    assert main(["--zoo", str(tmp_path / "absent"), "--out", str(tmp_path / "eval")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.endswith("error: no zoo directory (run `make zoo`)") and "\n" not in err


def test_the_committed_paper_counts_are_the_papers():
    import hashlib

    from evaluation.groundtruth import PAPER_COUNTS, PAPER_COUNTS_SHA256
    assert hashlib.sha256(PAPER_COUNTS.read_bytes()).hexdigest() == PAPER_COUNTS_SHA256
    rows = PAPER_COUNTS.read_text().splitlines()
    assert rows[0].startswith("model\t") and len(rows) == 200  # the header and 199 models
