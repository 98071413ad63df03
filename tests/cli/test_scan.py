"""`adopter scan`: output contracts (README.md, "Outputs"), rule selection errors, zoo sample vs ground truth."""

import json

import pandas as pd
from typer.testing import CliRunner

from adopter.cli.app import app
from adopter.records import Literal
from adopter.api.scan import scan
from evaluation.evaluate import GROUNDTRUTH
from evaluation.metrics import model_of
from adopter.rules.registry import load_rules
from evaluation.zoo import zoo_modules

CODE = """
import torch.nn.functional as F
from torch import nn
class Attn(nn.Module):
    def forward(self, x):
        if self.training:
            y = F.softmax(x, dim=-1)
        return y
"""


def run(*args):
    return CliRunner().invoke(app, list(map(str, args)))


def test_jsonl_has_the_contract_fields(tmp_path):
    (tmp_path / "m.py").write_text(CODE)
    result = run("scan", tmp_path, "--format", "jsonl", "--rules", "softmax")
    assert result.exit_code == 0, result.output
    (record,) = [json.loads(line) for line in result.stdout.splitlines()]
    assert {"rule", "file", "class", "function", "line", "end_line", "init_lines", "bindings", "path"} <= set(record)
    assert (record["rule"], record["class"], record["function"], record["line"]) == ("softmax", "Attn", "forward", 7)
    assert record["bindings"] == {"$x": "x", "$y": "y"}
    assert record["path"] == [{"condition": "self.training", "holds": True}]


def test_table_shows_the_guard_path_and_a_module_level_function_by_its_name(tmp_path):
    (tmp_path / "m.py").write_text(CODE + """
def attend(x):
    return F.softmax(x, dim=-1)
class Caller(nn.Module):
    def forward(self, x):
        return attend(x)
""")
    result = run("scan", tmp_path / "m.py", "-r", "softmax")
    assert result.exit_code == 0, result.output
    rows = [line.split() for line in result.stdout.splitlines()[1:]]
    assert [row[1:] for row in rows] == [["softmax", "Attn.forward", "self.training"], ["softmax", "attend", "-"]]


def test_a_path_below_many_early_exits_reports_the_nearest_literals_and_says_it_is_cut(tmp_path):
    exits = "".join(f"        if self.exit_{k}:\n            return x\n" for k in range(40))
    (tmp_path / "m.py").write_text(CODE.replace("        if self.training:", exits + "        if self.training:"))
    result = run("scan", tmp_path, "--format", "jsonl", "--rules", "softmax")
    assert result.exit_code == 0, result.output
    (record,) = [json.loads(line) for line in result.stdout.splitlines()]
    path = [(lit["condition"], lit["holds"]) for lit in record["path"]]
    assert record["path_truncated"] is True and ("self.training", True) in path and len(path) == 16
    # the nearest exits are reported, the first ones are not
    assert ("self.exit_39", False) in path and ("self.exit_0", False) not in path
    table = run("scan", tmp_path, "--rules", "softmax").stdout
    assert table.splitlines()[1].endswith(", ...")
    # a short path is whole and says nothing of a cut
    (tmp_path / "m.py").write_text(CODE)
    (short,) = [json.loads(line) for line in run("scan", tmp_path, "--format", "jsonl", "--rules", "softmax").stdout.splitlines()]
    assert "path_truncated" not in short and short["path"] == [{"condition": "self.training", "holds": True}]


def test_sarif_is_a_2_1_0_log(tmp_path):
    (tmp_path / "m.py").write_text(CODE)
    log = json.loads(run("scan", tmp_path / "m.py", "--format", "sarif", "-r", "softmax").stdout)
    assert log["version"] == "2.1.0" and log["runs"][0]["tool"]["driver"]["rules"][0]["id"] == "softmax"
    # the driver names the installed version and no page of its own (the package page it named does not exist)
    from importlib.metadata import version
    driver = log["runs"][0]["tool"]["driver"]
    assert driver["version"] == version("adopter") and "informationUri" not in driver
    (result,) = log["runs"][0]["results"]
    assert result["locations"][0]["physicalLocation"]["region"]["startLine"] == 7


GLU = """
import torch.nn.functional as F
from torch import nn
class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.gate, self.up, self.proj = nn.Linear(4, 8), nn.Linear(4, 8), nn.Linear(4, 16)
    def forward(self, x):
        y = F.silu(self.gate(x)) * self.up(x)
        a, b = self.proj(x).chunk(2, dim=-1)
        return y + a * F.silu(b)
"""


def test_the_shapes_of_one_rule_report_under_its_id(tmp_path):
    # swiglu.silu_fn.adopt and swiglu.chunk_silu_fn_last.adopt: one rule, two shapes
    (tmp_path / "m.py").write_text(GLU)
    rows = [json.loads(line) for line in run("scan", tmp_path / "m.py", "--format", "jsonl", "-r", "swiglu").stdout.splitlines()]
    assert [(r["rule"], r["line"], r["shape"]) for r in rows] == [("swiglu", 9, "silu_fn"), ("swiglu", 11, "chunk_silu_fn_last")]
    log = json.loads(run("scan", tmp_path / "m.py", "--format", "sarif", "-r", "swiglu").stdout)
    assert [d["id"] for d in log["runs"][0]["tool"]["driver"]["rules"]] == ["swiglu"]  # one descriptor per rule
    assert {r["ruleIndex"] for r in log["runs"][0]["results"]} == {0}


def test_output_file_is_written_and_stdout_stays_empty(tmp_path):
    (tmp_path / "m.py").write_text(CODE)
    out = tmp_path / "report" / "matches.jsonl"
    result = run("scan", tmp_path / "m.py", "--format", "jsonl", "-o", out)
    assert result.exit_code == 0 and result.stdout == "" and len(out.read_text().splitlines()) == 1


def test_unknown_rule_and_malformed_rule_stop_before_analysis(tmp_path):
    (tmp_path / "m.py").write_text(CODE)
    unknown = run("scan", tmp_path, "--rules", "no_such_rule")
    assert unknown.exit_code == 2 and unknown.stderr.startswith("no_such_rule: error: unknown rule id")
    bad = tmp_path / "broken.adopt"
    bad.write_text("rule: broken\nforward: torch.relu($x) -> \n")
    malformed = run("scan", tmp_path / "m.py", "--rules", bad)
    assert malformed.exit_code == 2 and malformed.stderr.startswith(f"{bad}:2:25: error: unexpected end of input")
    assert malformed.stdout == ""


def test_unreadable_file_is_reported_and_the_others_scanned(tmp_path):
    (tmp_path / "m.py").write_text(CODE)
    (tmp_path / "bad.py").write_bytes(b"\xff\xfe")
    result = run("scan", tmp_path, "--format", "jsonl", "-j", "1")
    assert result.exit_code == 1
    assert "bad.py:1: error: not UTF-8" in result.stderr and len(result.stdout.splitlines()) == 1


def test_rules_show_prints_the_generated_datalog():
    result = run("rules", "show", "dropout_layernorm", "--datalog")
    assert result.exit_code == 0 and 'cand_oriented(m("dropout_layernorm", R, ' in result.stdout


SAMPLE = ["bert", "dpt", "groupvit", "gpt2", "t5", "gpt_neo", "clap", "efficientformer", "xlnet", "albert", "xmod"]


def test_zoo_sample_matches_the_ground_truth_exactly(zoo):
    files = [str(zoo / f"modeling_{m}.py") for m in SAMPLE]
    result = scan(files, load_rules(["paper"]), jobs=1, modules=zoo_modules(files))  # (the paper's rules: as the ground truth)
    assert result.failed == 0
    ours = {(model_of(m.file), m.rule, m.class_, m.line) for m in result.matches}
    truth = pd.read_csv(GROUNDTRUTH, sep="\t", keep_default_na=False)
    truth = {tuple(r) for r in truth[truth["model"].isin(SAMPLE)][["model", "rule", "class", "line"]].itertuples(index=False)}
    assert ours == truth


def test_results_are_identical_with_and_without_cache_and_parallelism(zoo, tmp_path):
    files = [str(zoo / f"modeling_{m}.py") for m in ("bert", "dpt", "gpt_neo", "clap")]
    rules, modules = load_rules(), zoo_modules(files)
    cold_serial = scan(files, rules, jobs=1, cache_dir=None, modules=modules)
    filled = scan(files, rules, jobs=2, cache_dir=tmp_path / "cache", modules=modules)
    warm = scan(files, rules, jobs=2, cache_dir=tmp_path / "cache", modules=modules)
    assert all(f.cached for f in warm.files) and not any(f.cached for f in filled.files)
    as_json = [[m.to_json() for m in r.matches] for r in (cold_serial, filled, warm)]
    assert as_json[0] == as_json[1] == as_json[2] and len(as_json[0]) > 10


def test_a_changed_file_is_reanalysed_and_its_neighbours_are_not(tmp_path):
    (tmp_path / "a.py").write_text(CODE)
    (tmp_path / "b.py").write_text(CODE)
    cache = tmp_path / "cache"
    scan([str(tmp_path)], load_rules(["softmax"]), jobs=1, cache_dir=cache)
    (tmp_path / "b.py").write_text(CODE.replace("dim=-1", "dim=1"))
    again = scan([str(tmp_path)], load_rules(["softmax"]), jobs=1, cache_dir=cache)
    assert [f.cached for f in again.files] == [True, False]


def test_modern_rules_find_every_hand_written_rms_norm_and_manual_attention_of_the_sample(zoo):
    files = [zoo / f"modeling_{m}.py" for m in ("t5", "llama", "bert")]
    result = scan([str(f) for f in files], load_rules(["modern"]), jobs=1, modules=zoo_modules(files))
    found = {(model_of(m.file), m.rule, m.class_) for m in result.matches}
    # T5's attention is not scaled and Llama's transposes (2, 3) and takes a float32 softmax: found by
    # manual_attention.steps (any element-wise steps), not by the written-out chain
    assert found == {("t5", "rms_norm_upcast", "T5LayerNorm"), ("llama", "rms_norm", "LlamaRMSNorm"),
                     ("bert", "manual_attention", "BertSelfAttention"), ("t5", "manual_attention", "T5Attention"),
                     ("llama", "manual_attention", "LlamaAttention"),
                     ("t5", "swiglu", "T5DenseGatedActDense"), ("llama", "swiglu", "LlamaMLP"),
                     ("llama", "rotary", "-"),  # in the module-level apply_rotary_pos_emb
                     # (fused_linear_cross_entropy's classifier and own-size shapes; Llama's shift is no location)
                     ("bert", "fused_linear_cross_entropy", "BertForTokenClassification"),
                     ("bert", "fused_linear_cross_entropy", "BertForSequenceClassification"),
                     ("t5", "fused_linear_cross_entropy", "T5ForConditionalGeneration")}


def test_rules_find_matches_in_module_level_functions_whatever_their_scope(tmp_path):
    # `scope:` says where a rewrite may edit (tests/rewrite/test_rewriter.py: a rule with `scope:
    # methods` is refused there), not what is found; both rules here have `scope: functions`
    source = tmp_path / "m.py"
    source.write_text("""
import torch
import torch.nn.functional as F
from torch import nn
def probs(x):
    return F.softmax(x, dim=-1)
def gelu(x):
    return x * 0.5 * (1.0 + torch.tanh(0.79788456 * x * (1 + 0.044715 * x * x)))
class Attn(nn.Module):
    def forward(self, x):
        return gelu(probs(x))
""")
    matches = scan([str(source)], load_rules(["softmax", "tanh_gelu"]), jobs=1).matches
    assert [(m.rule, m.line, m.class_, m.function) for m in matches] == [
        ("softmax", 6, "-", "probs"), ("tanh_gelu", 8, "-", "gelu")]


HELPER_TWICE = """
import torch.nn.functional as F
from torch import nn
class Attn(nn.Module):
    def forward(self, x, g=None):
        if g is None:
            return self.core(x)
        return self.core(x + g)
    def core(self, s):
        return F.softmax(s, dim=-1)
"""


def test_a_location_reached_twice_gives_one_match_whatever_order_clingo_derives_it_in(tmp_path):
    from adopter.datalog.engine import MAIN_PROGRAM, MATCH_PROGRAMS, Model, solve
    from adopter.matches.build import REPORTED, matches_from_model, rules_program
    from adopter.extract.python_facts import extract_source
    rules = [r for r in load_rules() if r.id == "softmax"]
    facts = extract_source(HELPER_TWICE, "m.py")
    model = solve(facts, rules_program(rules), programs=(MAIN_PROGRAM, *MATCH_PROGRAMS), keep=REPORTED)
    assert len({m[1] for m in model.get("match_node")}) == 1 and len(model.get("match_node")) == 2  # two candidates
    reversed_model = Model({name: rows[::-1] for name, rows in model.relations.items()})
    matches, again = matches_from_model(model, facts, rules), matches_from_model(reversed_model, facts, rules)
    assert len(matches) == 1 and [m.__dict__ for m in matches] == [m.__dict__ for m in again]
    assert matches[0].line == 10 and matches[0].path == [Literal("g is None", True)]


UNMODELLED = """
import torch.nn.functional as F
from torch import nn
A = B = 0
class Attn(nn.Module):
    def forward(self, x):
        global A
        global B
        A += 1
        return F.softmax(x, dim=-1)
    def other(self, x):
        global A
        return x
class Counted(nn.Module):
    def forward(self, x):
        n = 0
        def bump():
            nonlocal n
            n += 1
        bump()
        return F.softmax(x, dim=-1)
"""


def test_a_function_with_global_or_nonlocal_is_not_matched_and_warned_about_once_per_construct(tmp_path):
    (tmp_path / "m.py").write_text(UNMODELLED)
    rules = load_rules(["softmax", "tanh_gelu"])
    cold = scan([str(tmp_path / "m.py")], rules, jobs=1, cache_dir=tmp_path / "cache")
    warm = scan([str(tmp_path / "m.py")], rules, jobs=1, cache_dir=tmp_path / "cache")
    assert warm.files[0].cached
    for result in (cold, warm):
        assert result.matches == [] and result.failed == 0
        # `other` holds a `global` too, but no rule candidate was there to exclude
        assert [str(d).split("m.py:")[1] for d in result.diagnostics] == [
            "7: warning: `global` statement not modelled: no rewrite in Attn.forward",
            "18: warning: `nonlocal` statement not modelled: no rewrite in Counted.forward",
        ]


def test_a_value_read_in_one_case_of_a_match_holds_the_match_to_the_other_cases(tmp_path):
    (tmp_path / "m.py").write_text("""
from torch import nn
class Out(nn.Module):
    def __init__(self):
        self.dropout = nn.Dropout(0.1)
        self.LayerNorm = nn.LayerNorm(4)
    def forward(self, h, r):
        x = self.dropout(h)
        out = self.LayerNorm(x + r)
        match self.mode:
            case "drop":
                return out, x
            case _:
                return out
""")
    (match,) = scan([str(tmp_path / "m.py")], load_rules(["dropout_layernorm"]), jobs=1).matches
    assert match.eager_when == [[Literal('match self.mode: case "drop"', True)]]


NEAR = """
import torch.nn as nn
class M(nn.Module):
    def __init__(self, d, use_bn):
        super().__init__()
        self.use_bn = use_bn
        self.conv = nn.Conv2d(d, d, 3)
        if self.use_bn:
            self.bn = nn.BatchNorm2d(d)
        self.drop = nn.Dropout(0.1)
        self.ln = nn.LayerNorm(d)
    def forward(self, x, h):
        y = self.conv(x)
        if not self.use_bn:
            y = self.bn(y)
        z = self.drop(h)
        print(z.shape)
        return self.ln(z + y)
"""


def test_explain_reports_each_candidate_that_fails_one_check_with_its_evidence(tmp_path):
    (tmp_path / "m.py").write_text(NEAR)
    rules = ("-r", "conv_batchnorm", "-r", "dropout_layernorm")
    plain = run("scan", tmp_path, "--format", "jsonl", *rules)
    assert plain.exit_code == 0, plain.output
    assert plain.stdout == ""  # no match, and no near miss unless asked
    result = run("scan", tmp_path, "--format", "jsonl", "--explain", *rules)
    assert result.exit_code == 0, result.output
    records = [json.loads(line) for line in result.stdout.splitlines()]
    assert [(r["rule"], r["line"], r["near_miss"]) for r in records] == [
        ("conv_batchnorm", 13, {"check": "layer not built", "detail": "use_bn", "detail_line": 9}),
        ("dropout_layernorm", 16, {"check": "read outside", "detail": "", "detail_line": 17})]
    table = run("scan", tmp_path, "--explain", *rules)
    assert "the layer is built (line 9) only where `self.use_bn` is the other way" in table.stdout
    assert "a value it removes is read outside the match (line 17)" in table.stdout
    sarif = json.loads(run("scan", tmp_path, "--explain", "--format", "sarif", *rules).stdout)
    assert [r["level"] for r in sarif["runs"][0]["results"]] == ["none", "none"]


def test_the_cache_holds_a_rule_set_whatever_order_its_rules_were_chosen_in(tmp_path):
    (tmp_path / "a.py").write_text(CODE)
    cache = tmp_path / "cache"
    scan([str(tmp_path)], load_rules(["modern", "paper"]), jobs=1, cache_dir=cache)
    again = scan([str(tmp_path)], load_rules(), jobs=1, cache_dir=cache)  # every bundled rule, in id order
    assert [f.cached for f in again.files] == [True]


def test_every_key_rules_list_prints_selects_that_rule_or_shape():
    listed = [line.split("\t")[0] for line in run("rules", "list").stdout.splitlines()]
    assert "swiglu.silu_fn" in listed and "swiglu" in listed
    from adopter.rules.registry import load_rules
    for key in listed:
        chosen = load_rules([key], cache_dir=None)
        assert key in [r.key for r in chosen]
        assert "." not in key or [r.key for r in chosen] == [key]  # a shape's key: that file alone
    shown = run("rules", "show", "swiglu.silu_fn")
    assert shown.exit_code == 0 and "rule: swiglu" in shown.stdout and "torch.nn.functional.silu($g)" in shown.stdout
