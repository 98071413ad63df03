"""The file-column program of evaluation/bench/batch_ground.py: what it tags, and that several
files grounded at once give each file the atoms it gets alone. What a ground costs is
measured by the bench, never here."""

from __future__ import annotations

from evaluation.bench import batch_ground


def test_only_relations_that_depend_on_facts_get_the_file_column():
    text, dependent = batch_ground.with_file_column(
        'higher(1, "x").\n'
        'uses(E, N) :- name(E, N, "load"), higher(_I, N).\n'
        'unused(I) :- higher(I, _N), not uses(_E, _M).\n'
        'fixed(I) :- higher(I, _N).\n'
        '#defined uses/2.\n')
    assert ("uses", 2) in dependent and ("unused", 1) in dependent and ("name", 3) in dependent
    assert ("higher", 2) not in dependent and ("fixed", 1) not in dependent
    assert 'higher(1,"x").' in text and "fixed(I) :- higher(I,_N)." in text
    assert 'uses(Fl__,E,N) :- name(Fl__,E,N,"load"); higher(_I,N).' in text
    # a rule that reads its file only under `not` is given the file to range over
    assert "unused(Fl__,I) :- file__(Fl__); higher(I,_N); not uses(Fl__,_E,_M)." in text
    assert "#defined uses/3." in text


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
