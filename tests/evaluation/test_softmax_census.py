"""evaluation/softmax_census.py: the functional softmax calls of a corpus, and which a scan found."""

from __future__ import annotations

import json

from evaluation import softmax_census


def test_calls_are_counted_per_call_and_matched_by_node_line(tmp_path, capsys):
    corpus = tmp_path / "corpus"
    (corpus / "pkg").mkdir(parents=True)
    (corpus / "pkg" / "m.py").write_text(
        "import torch.nn.functional as F\n"
        "from torch import nn\n"
        "# F.softmax(x) in a comment\n"
        "a = F.softmax(x, -1) + nn.functional.softmax(y, -1)\n"
        "b = torch.nn.functional.softmax(z, dim=-1)\n"
        "c = x.softmax(-1)  # a method: not a functional call\n")
    assert softmax_census.census(corpus) == [("pkg/m.py", 4), ("pkg/m.py", 4), ("pkg/m.py", 5)]
    matches = tmp_path / "m.jsonl"
    matches.write_text(json.dumps({"rule": "softmax", "file": str(corpus / "pkg" / "m.py"),
                                   "nodes": [{"span": [4, 4, 4, 19]}]}) + "\n"
                       + json.dumps({"rule": "swiglu", "file": str(corpus / "pkg" / "m.py"),
                                     "nodes": [{"span": [5, 4, 5, 40]}]}) + "\n")
    assert softmax_census.main([str(corpus), str(matches)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("3 functional softmax calls, 2 on a line a softmax match has (0.667)")
    assert "pkg/m.py:5" in out and "pkg/m.py:4" not in out
