"""Whole-project analysis as a user meets it (adopter/matches/project.py): one run over a package
finds a block whose layers a base class in another file builds, through a chain of bases across
files; `apply` leaves such a match alone and names the other file; a second run reads the cache,
and a changed file is analysed again with the files that subclass its classes, no others."""

import subprocess
import sys
import textwrap
from pathlib import Path

from adopter.api.scan import scan
from adopter.rules.registry import load_rules

FILES = {
    "pkg/__init__.py": "",
    "pkg/base.py": """
        import torch.nn as nn
        def conv3x3(i, o):
            return nn.Conv2d(i, o, 3, bias=False)
        class Block(nn.Module):
            def __init__(self, i, o, norm_layer=None):
                super().__init__()
                if norm_layer is None:
                    norm_layer = nn.BatchNorm2d
                self.conv = conv3x3(i, o)
                self.bn = norm_layer(o)
            def forward(self, x):
                return self.bn(self.conv(x))
    """,
    "pkg/quant.py": """
        import torch.nn as nn
        from .base import Block
        class QBlock(Block):
            def __init__(self, *args, **kwargs):
                super().__init__(*args, **kwargs)
                self.relu = nn.ReLU()
            def forward(self, x):
                x = self.conv(x)
                x = self.bn(x)
                return self.relu(x)
    """,
    # a chain: Mid (this package, another file) inherits Block's constructor; Leaf subclasses Mid
    "pkg/mid.py": """
        from pkg.base import Block
        class Mid(Block):
            pass
    """,
    "pkg/sub/__init__.py": "",
    "pkg/sub/leaf.py": """
        from ..mid import Mid
        class Leaf(Mid):
            def forward(self, x):
                y = self.conv(x)
                return self.bn(y)
    """,
    "pkg/alone.py": """
        import torch.nn as nn
        class Alone(nn.Module):
            def forward(self, x):
                return x.softmax(-1)
    """,
}


def _write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(textwrap.dedent(text))


def test_one_run_finds_layers_a_base_class_in_another_file_builds(tmp_path):
    _write(tmp_path, FILES)
    report = scan([str(tmp_path / "pkg")], load_rules(cache_dir=None), cache_dir=None, jobs=1)
    by_file = {Path(m.file).relative_to(tmp_path).as_posix(): (m.class_, [Path(c.file).relative_to(tmp_path).as_posix()
                                                                          if c.file else "" for c in m.ctors])
               for m in report.matches if m.rule == "conv_batchnorm"}
    assert by_file == {
        "pkg/base.py": ("Block", ["", ""]),
        "pkg/quant.py": ("QBlock", ["pkg/base.py", "pkg/base.py"]),
        "pkg/sub/leaf.py": ("Leaf", ["pkg/base.py", "pkg/base.py"]),   # Block -> Mid -> Leaf, three files
    }
    assert report.failed == 0


def test_a_class_two_files_define_under_one_name_lends_nothing(tmp_path):
    # two copies of the package in one run: which Block a base names is not known
    for copy in ("a", "b"):
        _write(tmp_path / copy, {k: v for k, v in FILES.items() if k in ("pkg/__init__.py", "pkg/base.py")})
    _write(tmp_path / "a", {"pkg/quant.py": FILES["pkg/quant.py"]})
    report = scan([str(tmp_path / "a"), str(tmp_path / "b")], load_rules(cache_dir=None), cache_dir=None, jobs=1)
    assert sorted(Path(m.file).relative_to(tmp_path).as_posix() for m in report.matches if m.rule == "conv_batchnorm") \
        == ["a/pkg/base.py", "b/pkg/base.py"]


def test_apply_leaves_a_match_built_in_another_file_and_names_it(tmp_path):
    _write(tmp_path, FILES)
    before = {p: p.read_bytes() for p in tmp_path.rglob("*.py")}
    run = subprocess.run([sys.executable, "-m", "adopter", "apply", "pkg/quant.py", "pkg/base.py", "--kernels", "default",
                          "--write", "--no-cache"], cwd=tmp_path, capture_output=True, text=True)
    assert "pkg/quant.py:9: conv_batchnorm: not rewritten: self.conv is built in pkg/base.py at line 4, another file" \
        in run.stderr + run.stdout
    assert {p: p.read_bytes() for p in tmp_path.rglob("*.py")}.keys() == before.keys()
    assert (tmp_path / "pkg/quant.py").read_bytes() == before[tmp_path / "pkg/quant.py"]


def test_a_changed_file_is_analysed_again_with_the_files_that_subclass_its_classes(tmp_path):
    _write(tmp_path / "src", FILES)
    rules, cache = load_rules(cache_dir=None), tmp_path / "cache"

    def analysed() -> set[str]:
        report = scan([str(tmp_path / "src" / "pkg")], rules, cache_dir=cache, jobs=1)
        assert len([m for m in report.matches if m.rule == "conv_batchnorm"]) == 3
        return {Path(f.path).relative_to(tmp_path / "src").as_posix() for f in report.files if not f.cached}

    assert len(analysed()) == len(FILES)                 # cold: every file
    assert analysed() == set()                           # warm: none
    alone = tmp_path / "src" / "pkg" / "alone.py"
    alone.write_text(alone.read_text() + "# a comment\n")
    assert analysed() == {"pkg/alone.py"}                # a file nobody subclasses: itself only
    base = tmp_path / "src" / "pkg" / "base.py"
    base.write_text("# a comment\n" + base.read_text())  # (its constructions move a line down)
    assert analysed() == {"pkg/base.py", "pkg/mid.py", "pkg/quant.py", "pkg/sub/leaf.py"}


def test_a_function_another_file_imports_is_scanned_where_it_is_defined(tmp_path):
    _write(tmp_path, {
        "flow/__init__.py": "",
        "flow/_utils.py": """
            import torch
            class Unused:
                pass
            def upsample_flow(flow, up_mask):
                up_mask = torch.softmax(up_mask, dim=-1)
                return flow * up_mask
            def unused(x):
                return torch.softmax(x, dim=-1)
        """,
        "flow/raft.py": """
            import torch.nn as nn
            from ._utils import upsample_flow
            class RAFT(nn.Module):
                def forward(self, flow, mask):
                    return upsample_flow(flow, mask)
        """,
    })
    report = scan([str(tmp_path / "flow")], load_rules(["softmax"], cache_dir=None), cache_dir=None, jobs=1)
    # in the function raft.py imports; not in the one nothing imports (nor runs)
    assert [(Path(m.file).name, m.function, m.line) for m in report.matches] == [("_utils.py", "upsample_flow", 6)]
