"""`adopter test`: a user's rule and its fixture outside the package, checked as a user runs it
(the CLI in a subprocess): passing annotations, and each way one fails, named with file and line."""

import os
import subprocess
import sys
import textwrap

from conftest import ROOT

RULE = textwrap.dedent("""\
    rule: my_relu
    init: _ => _
    forward:
        torch.relu($x) -> $y
        =>
        _
    """)
FIXTURE = textwrap.dedent("""\
    import torch
    from torch import nn


    class M(nn.Module):
        def forward(self, x):
            # match: my_relu
            a = torch.relu(x)
            # no-match: my_relu
            b = torch.tanh(x)
            # todo-match: my_relu
            c = x.clamp(min=0)
            return a, b, c
    """)


def run_test(folder):
    return subprocess.run([sys.executable, "-m", "adopter.cli", "test", str(folder)], capture_output=True, text=True,
                          env=dict(os.environ, PYTHONPATH=str(ROOT)))


def test_a_users_rule_passes_its_fixture(tmp_path):
    (tmp_path / "my_relu.adopt").write_text(RULE)
    (tmp_path / "my_relu.py").write_text(FIXTURE)
    done = run_test(tmp_path)
    assert done.returncode == 0 and done.stderr == "1 rules, 3 annotations: 1 passed, 0 failed\n"


def test_each_way_a_fixture_fails_is_one_line_with_file_and_line(tmp_path):
    (tmp_path / "my_relu.adopt").write_text(RULE)
    broken = (FIXTURE.replace("# no-match: my_relu\n        b = torch.tanh(x)", "# no-match: my_relu\n        b = torch.relu(x)")
              .replace("# match: my_relu\n        a = torch.relu(x)", "# match: my_relu\n        a = torch.sigmoid(x)")
              + "\n\ndef extra(x):\n    return torch.relu(x)\n\n\nclass N(nn.Module):\n    def forward(self, x):\n"
                "        return torch.relu(x)\n")
    (tmp_path / "my_relu.py").write_text(broken)
    done = run_test(tmp_path)
    fixture = tmp_path / "my_relu.py"
    assert done.returncode == 1
    assert done.stderr.splitlines() == [
        f"{fixture}:8: error: my_relu: annotated `# match` but not reported",
        f"{fixture}:10: error: my_relu: reported at a `# no-match` annotation",
        f"{fixture}:10: error: my_relu: reported without a `# match` annotation (or more often than annotated)",
        f"{fixture}:22: error: my_relu: reported without a `# match` annotation (or more often than annotated)",
        "1 rules, 3 annotations: 0 passed, 1 failed"]


def test_a_rule_without_a_fixture_and_a_path_without_rules(tmp_path):
    (tmp_path / "my_relu.adopt").write_text(RULE)
    done = run_test(tmp_path)
    assert done.returncode == 1 and f"{tmp_path / 'my_relu.adopt'}: error: my_relu: no fixture my_relu.py beside it" in done.stderr
    empty = tmp_path / "empty"
    empty.mkdir()
    nothing = run_test(empty)
    assert nothing.returncode == 2 and "no .adopt rule files found" in nothing.stderr
