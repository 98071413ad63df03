"""The CLI: outputs, exit status, and bad input (one clear line per file, others go on)."""

import json
import os
import subprocess
import sys

import pytest
from typer.testing import CliRunner

from adopter.cli.app import app

GOOD = """
import torch.nn.functional as F
from torch import nn
class M(nn.Module):
    def __init__(self):
        self.lin = nn.Linear(2, 2)
    def forward(self, x):
        return F.softmax(self.lin(x), dim=-1)
"""


def run(*args):
    return CliRunner().invoke(app, list(map(str, args)))


@pytest.fixture
def tree(tmp_path):
    (tmp_path / "good.py").write_text(GOOD)
    (tmp_path / "broken.py").write_text("class A:\n    def f(self):\n        return (\n")
    (tmp_path / "latin1.py").write_bytes(b"x = 1\n# caf\xe9\n")
    (tmp_path / "empty.py").write_text("")
    (tmp_path / "nopython").mkdir()
    return tmp_path


def test_bad_inputs_each_give_one_line_and_the_good_file_is_still_processed(tree):
    out = tree / "facts"
    result = run("facts", tree / "good.py", tree / "broken.py", tree / "latin1.py", tree / "empty.py",
                 tree / "nopython", tree / "missing.py", "--out", out, "-j", "1")
    assert result.exit_code == 1
    lines = result.stderr.strip().splitlines()
    # (the Python whose grammar rejected it is named: code written for a newer one fails as this one reads it)
    version = f"{sys.version_info.major}.{sys.version_info.minor}"
    assert f"{tree}/broken.py:3:" in result.stderr and f"syntax error (Python {version}): " in result.stderr
    assert f"{tree}/latin1.py:2: error: not UTF-8" in result.stderr
    assert f"{tree}/empty.py: warning: empty file" in result.stderr
    assert f"{tree}/nopython: error: directory contains no Python files" in result.stderr
    assert f"{tree}/missing.py: error: no such file or directory" in result.stderr
    assert len(lines) == 5
    assert "2 files" not in result.stdout and "4 failed" in result.stdout
    calls = (out / "call.tsv").read_text()
    assert "good.py" in calls and "broken.py" not in calls


def test_all_good_input_exits_zero_and_summarises(tree):
    result = run("facts", tree / "good.py", "--out", tree / "f", "-j", "1")
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("1 files, ") and "0 failed" in result.stdout
    assert "3 DL nodes, 1 forward structures" in result.stdout


def test_an_empty_package_marker_is_not_warned_about(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "model.py").write_text(GOOD)
    result = run("scan", tmp_path, "--no-cache", "-j", "1")
    assert result.exit_code == 0, result.output
    assert "warning" not in result.stderr and "softmax" in result.stdout


def test_a_warm_facts_run_writes_the_tables_it_cached_and_the_same_summary(tree):
    from adopter.api import analysis
    cold = analysis.run([str(tree / "good.py")], jobs=1, cache_dir=tree / "cache", tables=tree / "cold")
    warm = analysis.run([str(tree / "good.py")], jobs=1, cache_dir=tree / "cache", tables=tree / "warm")
    assert [f.cached for f in cold.files] == [False] and [f.cached for f in warm.files] == [True]
    assert warm.fact_count == cold.fact_count > 0 and warm.total(0) == cold.total(0) == 3
    for table in (tree / "cold").glob("*.tsv"):
        assert (tree / "warm" / table.name).read_text() == table.read_text(), table.name


def test_query_formats(tree):
    run("facts", tree / "good.py", "--out", tree / "f", "-j", "1")
    forward_functions = 'node_type(X, T), node_kind(X, function), node_root(X, r(F)), function_def(F, "forward", _, _, _, _)'
    result = run("query", forward_functions, "--facts", tree / "f", "--format", "json")
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in result.stdout.splitlines()]
    assert [r["T"] for r in rows] == ["torch.nn.functional.softmax"]
    # a node answer carries where it is: its line and source text in its file
    assert [(r["X.line"], r["X.function"], r["X.text"]) for r in rows] == [(8, "M.forward", "F.softmax(self.lin(x), dim=-1)")]
    tsv = run("query", 'qname(E, "torch.nn.Linear")', "--source", tree / "good.py", "--format", "tsv")
    assert tsv.stdout.splitlines()[0] == "file\tE" and len(tsv.stdout.splitlines()) == 2  # (no node column)


def test_invalid_query_is_one_clear_error(tree):
    result = run("query", "node_type(X,", "--source", tree / "good.py")
    assert result.exit_code == 2
    assert result.stderr.startswith("<query>: error: invalid query")


def test_structures_command_and_unknown_class(tree):
    result = run("structures", tree / "good.py", "--class", "M")
    assert result.stdout == "torch.nn.Linear(x) -> t1; torch.nn.functional.softmax(t1, dim=-1) -> t2\n"
    missing = run("structures", tree / "good.py", "--class", "Nope")
    assert missing.exit_code == 2 and "no class named 'Nope'" in missing.stderr


def test_console_script_is_installed():
    out = subprocess.run([sys.executable, "-m", "adopter.cli", "--help"], capture_output=True, text=True)
    assert out.returncode == 0 and "structures" in out.stdout


def test_rules_list_names_each_rule_with_its_pack():
    out = subprocess.run([sys.executable, "-m", "adopter.cli", "rules", "list"], capture_output=True, text=True)
    rows = {line.split("\t")[0]: line.split("\t")[1] for line in out.stdout.splitlines()}
    assert rows["softmax"] == "paper" and rows["rms_norm"] == "modern"
    # 17 rules; a file of another code shape of one of them is listed as `<id>.<shape>`
    assert rows["swiglu.chunk_gate_last"] == "modern" and len({key.partition(".")[0] for key in rows}) == 17


# a loss module built into a local name and called through it: it is a layer (a DL node) because the
# catalogue lists its type as a module class (types/layers.lp's library_module/1)
LOCAL_LOSS = """
from torch import nn
class M(nn.Module):
    def forward(self, logits, labels):
        loss_fct = nn.CrossEntropyLoss()
        return loss_fct(logits, labels)
"""


def test_facts_after_a_scan_with_one_cache_gives_the_summary_of_a_cold_run(tmp_path):
    from adopter.api import analysis, scan
    from adopter.rules.registry import load_rules
    (tmp_path / "m.py").write_text(LOCAL_LOSS)
    cold = analysis.run([str(tmp_path)], jobs=1, cache_dir=tmp_path / "cold")
    scan.scan([str(tmp_path)], load_rules(), jobs=1, cache_dir=tmp_path / "shared")
    after_scan = analysis.run([str(tmp_path)], jobs=1, cache_dir=tmp_path / "shared")
    assert [f.cached for f in after_scan.files] == [False]  # (the summary was not cached by the scan)
    assert cold.total(0) == 2  # the constructor's call, and the call of loss_fct
    assert [f.summary for f in after_scan.files] == [f.summary for f in cold.files]


def test_fact_tables_list_the_files_in_their_order_whatever_order_they_are_analysed_in(tmp_path):
    # files are analysed largest first, in parallel: the tables still follow the files' order
    from adopter.api import analysis
    for name, copies in (("a.py", 1), ("b.py", 6), ("c.py", 2), ("d.py", 4)):
        (tmp_path / name).write_text(GOOD * copies)
    analysis.run([str(tmp_path)], jobs=2, cache_dir=None, tables=tmp_path / "facts")
    files = [line.split("\t")[0] for line in (tmp_path / "facts" / "call.tsv").read_text().splitlines()[1:]]
    assert list(dict.fromkeys(files)) == [str(tmp_path / name) for name in ("a.py", "b.py", "c.py", "d.py")]


# a gated MLP whose activation comes from transformers' ACT2FN through a relative import: the
# import resolves only when the file is named as the module it is in transformers
ACT_FROM_PACKAGE = """
from torch import nn
from ...activations import ACT2FN
class MLP(nn.Module):
    def __init__(self, config):
        self.dense = nn.Linear(4, 4)
        self.act = ACT2FN[config.hidden_act]
    def forward(self, x):
        return self.act(self.dense(x))
"""


def test_module_root_and_module_map_name_files_outside_a_package(tmp_path):
    folder = tmp_path / "corpus" / "transformers" / "models" / "mine"
    folder.mkdir(parents=True)
    (folder / "modeling_mine.py").write_text(ACT_FROM_PACKAGE)
    (tmp_path / "flat").mkdir()
    (tmp_path / "flat" / "modeling_mine.py").write_text(ACT_FROM_PACKAGE)
    (tmp_path / "flat" / "MODULES.tsv").write_text("file\tmodule\nmodeling_mine.py\ttransformers.models.mine.modeling_mine\n")

    def found(*args) -> list[str]:
        result = run("scan", *args, "-r", "bias_gelu", "--format", "jsonl", "--no-cache", "-j", "1")
        assert result.exit_code == 0, result.output
        return [json.loads(line)["class"] for line in result.stdout.splitlines()]

    assert found(folder) == []  # named `modeling_mine`: `...activations` does not resolve
    assert found(folder, "--module-root", tmp_path / "corpus") == ["MLP"]
    assert found(tmp_path / "flat") == []
    assert found(tmp_path / "flat", "--module-map", tmp_path / "flat" / "MODULES.tsv") == ["MLP"]
    (tmp_path / "bad.tsv").write_text("file module\n")
    bad = run("scan", tmp_path / "flat", "--module-map", tmp_path / "bad.tsv")
    assert bad.exit_code == 2 and "header" in bad.output


def test_facts_runs_rules_only_when_asked(tmp_path):
    from adopter.api import analysis
    from adopter.api.rules import load_rules
    from adopter.api.scan import scan

    (tmp_path / "m.py").write_text(GOOD)
    assert analysis.run([str(tmp_path / "m.py")], jobs=1, cache_dir=None).files[0].matches is None
    # with --rules, their matches are cached too (the default cache), for a later scan of the same rules
    result = run("facts", tmp_path / "m.py", "--out", tmp_path / "facts", "-j", "1", "-r", "softmax")
    assert result.exit_code == 0, result.output
    scanned = scan([str(tmp_path / "m.py")], load_rules(["softmax"]), jobs=1)
    assert [f.cached for f in scanned.files] == [True] and len(scanned.matches) == 1


def test_version_is_the_installed_distribution_s():
    import tomllib
    from pathlib import Path

    version = tomllib.loads((Path(__file__).resolve().parents[2] / "pyproject.toml").read_text())["project"]["version"]
    out = subprocess.run([sys.executable, "-m", "adopter.cli", "--version"], capture_output=True, text=True)
    assert out.returncode == 0 and out.stdout == f"adopter {version}\n"


SUPPRESSED = """
import torch.nn.functional as F
from torch import nn


class M(nn.Module):
    def forward(self, x, y, z):
        a = F.softmax(x, dim=-1)  # adopter: ignore[softmax]
        b = F.softmax(y, dim=-1)  # adopter: ignore[rotary]
        c = F.softmax(z, dim=-1)  # adopter: ignore
        d = x + 1  # adopter: ignore
        return a, b, c, d
"""


def test_an_ignore_comment_keeps_its_match_out_of_scan_and_apply(tmp_path):
    source = tmp_path / "m.py"
    source.write_text(SUPPRESSED)
    cli = [sys.executable, "-m", "adopter.cli"]
    for _ in range(2):  # cold, then from the cache: the comments are read after it
        scanned = subprocess.run([*cli, "scan", str(source), "--rules", "softmax", "--format", "jsonl",
                                  "--show-ignored", "--warn-unused-ignores", "-o", str(tmp_path / "out.jsonl")],
                                 capture_output=True, text=True, env=dict(os.environ, ADOPTER_CACHE=str(tmp_path / "c")))
        assert scanned.returncode == 0, scanned.stderr
        assert [json.loads(line)["line"] for line in (tmp_path / "out.jsonl").read_text().splitlines()] == [9]
        assert scanned.stderr.splitlines() == [
            f"{source}:8: softmax: ignored (# adopter: ignore)",
            f"{source}:10: softmax: ignored (# adopter: ignore)",
            f"{source}:9: unused suppression: # adopter: ignore[rotary] keeps no match out",
            f"{source}:11: unused suppression: # adopter: ignore keeps no match out",
            "1 matches, 2 ignored in 1 files, " + scanned.stderr.splitlines()[-1].split(" files, ")[1]]
    applied = subprocess.run([*cli, "apply", str(source), "--rules", "softmax", "--kernels", "paper", "--diff",
                              "--no-cache"], capture_output=True, text=True)
    assert applied.returncode == 0, applied.stderr
    assert [line for line in applied.stdout.splitlines() if line[:1] in "+-" and line[:3] not in ("+++", "---")] == [
        "+from xformers.triton.softmax import softmax as xformers_softmax",
        "-        b = F.softmax(y, dim=-1)  # adopter: ignore[rotary]",
        "+        b = xformers_softmax(y)  # adopter: ignore[rotary]"]  # the two ignored softmaxes stay
    assert "1 patches in 1 files, 0 matches not rewritten" in applied.stderr


def test_fail_on_match_and_exit_zero_set_the_exit_status_for_ci(tmp_path):
    (tmp_path / "m.py").write_text(SUPPRESSED)
    (tmp_path / "broken.py").write_text("def f(:\n")
    cli = [sys.executable, "-m", "adopter.cli", "scan", "--rules", "softmax", "--no-cache"]

    def status(*args):
        return subprocess.run([*cli, *args], capture_output=True, text=True).returncode

    assert status(str(tmp_path / "m.py")) == 0
    assert status(str(tmp_path / "m.py"), "--fail-on-match") == 1          # one softmax is not suppressed
    (tmp_path / "m.py").write_text(SUPPRESSED.replace("ignore[rotary]", "ignore[softmax]"))
    assert status(str(tmp_path / "m.py"), "--fail-on-match") == 0          # every match suppressed
    assert status(str(tmp_path)) == 1                                      # broken.py failed
    assert status(str(tmp_path), "--exit-zero") == 0
    assert status(str(tmp_path), "--exit-zero", "--rules", "nope") == 2    # bad arguments still say so


def test_query_lists_the_relations_it_may_name_with_their_columns_and_meaning():
    out = subprocess.run([sys.executable, "-m", "adopter.cli", "query", "--list-relations"], capture_output=True,
                         text=True)
    assert out.returncode == 0
    rows = {line.split("\t")[0]: line.split("\t")[1:] for line in out.stdout.splitlines()}
    assert rows["call/2"] == ["Expr, Callee", "a call expression"]                 # the extractor's
    assert rows["qname/2"][0] == "Expr, QName" and rows["qname/2"][1]              # an analysis's, with its meaning
    from adopter.datalog.engine import known_relations
    from adopter.api.query import _PROGRAMS
    known = known_relations(_PROGRAMS)
    assert all(int(key.split("/")[1]) in known[key.split("/")[0]] for key in rows)  # every one can be queried
    missing = subprocess.run([sys.executable, "-m", "adopter.cli", "query"], capture_output=True, text=True)
    assert missing.returncode == 2 and "give a query" in missing.stderr


def test_the_shell_completes_commands_and_options():
    # as bash's completion function (adopter --show-completion bash) asks the installed command
    def complete(words):
        env = dict(os.environ, _ADOPTER_COMPLETE="complete_bash", COMP_WORDS=words, COMP_CWORD=str(len(words.split()) - 1))
        from pathlib import Path
        command = Path(sys.executable).parent / "adopter"  # the console script: completion keys on its name
        return subprocess.run([str(command)], capture_output=True, text=True, env=env).stdout.split()

    assert complete("adopter sc") == ["scan"]
    assert {"--exclude", "--explain", "--exit-zero"} <= set(complete("adopter scan --ex"))


def test_quiet_leaves_only_the_report_and_the_diagnostics(tmp_path):
    (tmp_path / "m.py").write_text(GOOD)
    (tmp_path / "broken.py").write_text("def f(:\n")
    cli = [sys.executable, "-m", "adopter.cli"]
    scanned = subprocess.run([*cli, "scan", str(tmp_path), "--rules", "softmax", "--no-cache", "-q",
                              "-o", str(tmp_path / "out.txt")], capture_output=True, text=True)
    assert scanned.returncode == 1 and (tmp_path / "out.txt").read_text()
    assert [line.split(": ")[1] for line in scanned.stderr.splitlines()] == ["error"]  # broken.py's, no summary
    applied = subprocess.run([*cli, "apply", str(tmp_path / "m.py"), "--rules", "softmax", "--diff", "-q",
                              "--no-cache"], capture_output=True, text=True)
    assert applied.returncode == 0 and applied.stderr == "" and applied.stdout == ""
