"""Queries keep the derived relations they name, per file (adopter/api/query.py): a later query
over kept relations is answered from them, without the analyses; an entry that holds anything
but atoms of its relation is a miss, never program text; a query of the extractor's relations
alone runs no analysis at all."""

import subprocess
import sys
import textwrap
from pathlib import Path

from conftest import facts_of
from adopter.api.query import _relation_keys, run_query
from adopter.support.cache import ResultCache, decode_entry

MODEL = """
import torch.nn.functional as F
from torch import nn
class M(nn.Module):
    def forward(self, x, y):
        a = F.softmax(x, dim=-1)
        return a + F.softmax(y, dim=-1)
"""
SOFTMAX = 'node_type(X, "torch.nn.functional.softmax"), node_site(X, _, E), expr(E, _, _, L, _, _, _)'


def _lines(frame) -> list[int]:
    return sorted(frame["L"])


def test_a_second_query_over_kept_relations_is_answered_from_them(tmp_path):
    facts = facts_of(MODEL, "m.py")
    assert _lines(run_query([facts], SOFTMAX, cache_dir=tmp_path)) == [6, 7]
    # the kept atoms answer the next query: a kept relation changed on disk (a valid entry that no
    # analysis would write) is what it reads
    for name in ("node_type",):
        key = _relation_keys(facts, [name])[name]
        entry = tmp_path / key[:2] / key
        value, (text,) = decode_entry("relation", entry.read_bytes())
        if name == "node_type":  # one of the two softmax atoms left out
            softmax = sorted(line for line in text.splitlines() if "softmax" in line)
            assert len(softmax) == 2
            text = "\n".join(line for line in text.splitlines() if line != softmax[0])
        ResultCache(tmp_path).put(key, "relation", value, [text])
    assert len(_lines(run_query([facts], SOFTMAX, cache_dir=tmp_path))) == 1
    # without the cache the analyses answer again
    assert _lines(run_query([facts], SOFTMAX)) == [6, 7]


def test_an_entry_that_is_not_atoms_of_its_relation_is_a_miss(tmp_path):
    facts = facts_of(MODEL, "m.py")
    run_query([facts], SOFTMAX, cache_dir=tmp_path)
    key = _relation_keys(facts, ["node_type"])["node_type"]
    for text in ('node_type(n(r(1),2),"x").\n#script (python)\nimport os\n#end.', 'other(1).', "node_type(("):
        ResultCache(tmp_path).put(key, "relation", {"relation": "node_type"}, [text])
        assert _lines(run_query([facts], SOFTMAX, cache_dir=tmp_path)) == [6, 7]


def test_the_command_line_keeps_relations_between_queries(tmp_path):
    model = tmp_path / "m.py"
    model.write_text(textwrap.dedent(MODEL))
    env_cache = tmp_path / "cache"

    def query(text: str) -> str:
        run = subprocess.run([sys.executable, "-m", "adopter", "query", text, "--source", str(model), "--format", "tsv"],
                             capture_output=True, text=True, env={"ADOPTER_CACHE": str(env_cache),
                                                                   "PATH": "/usr/bin:/bin"}, cwd=tmp_path)
        assert run.returncode == 0, run.stderr
        return run.stdout

    first = query(SOFTMAX)
    kept = {p.name for p in Path(env_cache).rglob("*") if p.is_file()}
    assert query(SOFTMAX) == first and "\t6\t" in first.replace("\n", "\t")
    assert {p.name for p in Path(env_cache).rglob("*") if p.is_file()} == kept  # nothing new: read back
