"""`adopter scan --format html`, rendered in headless Chromium as a person would open it: the
summary, one bar per rule and series in the chart, each file's matches (with what the kernel set
does to each), its diff and its near misses are elements of the rendered page."""

import shutil
import subprocess
import sys
import textwrap
from html.parser import HTMLParser

import pytest

from conftest import ZOO

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="needs a headless Chromium (apt install chromium)")

NEAR_MISS = textwrap.dedent("""
    import torch.nn as nn


    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(3, 8, 3)
            self.bn = nn.BatchNorm2d(8)

        def forward(self, x):
            c = self.conv(x)
            y = self.bn(c)
            return y + c
""")


class _Elements(HTMLParser):
    """Every element of a page: (tag, attributes), in document order."""

    def __init__(self) -> None:
        super().__init__()
        self.elements: list[tuple[str, dict]] = []

    def handle_starttag(self, tag, attrs) -> None:
        self.elements.append((tag, dict(attrs)))

    def having(self, tag: str, css_class: str = "", **attributes) -> list[dict]:
        return [a for t, a in self.elements if t == tag and css_class in (a.get("class") or "").split() + [""]
                and all(a.get(k) == v for k, v in attributes.items())]


def test_the_html_report_renders_the_chart_matches_diffs_and_near_misses(tmp_path):
    shutil.copy(ZOO / "modeling_bert.py", tmp_path / "modeling_bert.py")
    (tmp_path / "block.py").write_text(NEAR_MISS)
    (tmp_path / "pyproject.toml").write_text('[tool.adopter]\nkernels = "torch"\n')
    report = tmp_path / "report.html"
    run = subprocess.run([sys.executable, "-m", "adopter", "scan", "modeling_bert.py", "block.py", "--format", "html",
                          "-o", str(report), "--no-cache"], cwd=tmp_path, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    jsonl = subprocess.run([sys.executable, "-m", "adopter", "scan", "modeling_bert.py", "block.py", "--format", "jsonl",
                            "--no-cache"], cwd=tmp_path, capture_output=True, text=True).stdout.splitlines()
    dom = subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--dump-dom", report.as_uri()],
                         capture_output=True, text=True, timeout=120)
    assert dom.returncode == 0, dom.stderr[-2000:]
    page = _Elements()
    page.feed(dom.stdout)
    assert page.having("p", id="summary") and page.having("svg")
    # the chart: four bars per rule with matches (its matches, then the paper, torch and default sets)
    bars = page.having("rect", "bar")
    rules = {bar["data-rule"] for bar in bars}
    assert len(bars) == 4 * len(rules) and {"softmax", "dropout_layernorm"} <= rules
    softmax = {bar["data-series"]: int(bar["data-count"]) for bar in bars if bar["data-rule"] == "softmax"}
    assert softmax["matches"] == softmax["paper"] > 0 and softmax["torch"] == softmax["default"] == 0
    # one row per match, each rewritten or not with the torch set; the rewritten ones in the diff
    rows = page.having("tr", "match")
    assert len(rows) == len(jsonl)
    assert page.having("tr", "rewritten", **{"data-rule": "dropout_layernorm"})
    assert page.having("tr", "refused", **{"data-rule": "softmax"})
    assert page.having("pre", "diff") and page.having("span", "add") and page.having("span", "del")
    # the near miss: the conv's output is also read after the norm
    assert page.having("li", "near-miss", **{"data-rule": "conv_batchnorm"})
    assert len(page.having("section", "file")) == 2
