"""The dotted name a file is analysed under: it resolves relative imports, so a wrong name
loses every layer imported as `from ..x import y`."""

from pathlib import Path

import pytest

from adopter.extract.sources import ModuleNames, extract_text, module_name
from adopter.records import AdopterError


def _package(root: Path, *folders: str) -> Path:
    folder = root
    for name in folders:
        folder = folder / name
        folder.mkdir()
        (folder / "__init__.py").write_text("")
    return folder


def test_a_file_in_package_folders_is_named_from_the_topmost_package(tmp_path):
    folder = _package(tmp_path, "timm", "models")
    assert module_name(folder / "resnet.py") == "timm.models.resnet"
    assert module_name(folder / "__init__.py") == "timm.models"


def test_relative_imports_resolve_against_the_package_path(tmp_path):
    folder = _package(tmp_path, "transformers", "models", "deprecated", "nat")
    path = folder / "modeling_nat.py"
    facts, problem = extract_text("from ....activations import ACT2FN\n", path)
    assert problem is None
    assert [row[1:] for row in facts.rows["import_binding"]] == [("ACT2FN", "transformers.activations.ACT2FN")]


def test_outside_a_package_the_name_is_the_stem_whatever_the_file_is_called(tmp_path):
    assert module_name(tmp_path / "helpers.py") == "helpers"
    # (no guess from the name: a user's modeling_mine.py is not transformers.models.mine.modeling_mine)
    assert module_name(tmp_path / "modeling_mine.py") == "modeling_mine"


def test_a_module_root_names_files_by_their_path_below_it(tmp_path):
    folder = tmp_path / "src" / "pkg" / "models"
    folder.mkdir(parents=True)
    assert module_name(folder / "llama.py", tmp_path / "src") == "pkg.models.llama"
    assert module_name(folder / "__init__.py", tmp_path / "src") == "pkg.models"
    names = ModuleNames(roots=(tmp_path / "src",))
    assert names.of(folder / "llama.py") == "pkg.models.llama"
    assert names.of(tmp_path / "other.py") == "other"  # outside the root: as without it


def test_a_module_map_names_the_files_it_lists(tmp_path):
    table = tmp_path / "MODULES.tsv"
    table.write_text("file\tmodule\nmodeling_bert.py\ttransformers.models.bert.modeling_bert\n")
    names = ModuleNames.read_map(table)
    assert names.of(tmp_path / "modeling_bert.py") == "transformers.models.bert.modeling_bert"
    assert names.of(tmp_path / "modeling_gpt2.py") == "modeling_gpt2"
    facts, _ = extract_text("from ...activations import ACT2FN\n", tmp_path / "modeling_bert.py",
                            names.of(tmp_path / "modeling_bert.py"))
    assert [row[1:] for row in facts.rows["import_binding"]] == [("ACT2FN", "transformers.activations.ACT2FN")]


def test_a_bad_module_map_is_one_error_with_its_line(tmp_path):
    table = tmp_path / "MODULES.tsv"
    table.write_text("file\tmodule\nm.py\tnot a module\n")
    with pytest.raises(AdopterError) as error:
        ModuleNames.read_map(table)
    assert (error.value.diagnostic.file, error.value.diagnostic.line) == (str(table), 2)
    table.write_text("m.py\tx\n")
    with pytest.raises(AdopterError, match="header"):
        ModuleNames.read_map(table)
