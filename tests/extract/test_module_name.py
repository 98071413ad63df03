"""The dotted name a file is analysed under: it resolves relative imports, so a wrong name
loses every layer imported as `from ..x import y`."""

from pathlib import Path

from adopter.extract.sources import extract_text, module_name


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


def test_outside_a_package_the_name_comes_from_a_transformers_models_path_or_the_stem(tmp_path):
    assert module_name(Path("x/transformers/models/deprecated/nat/modeling_nat.py")) == \
        "transformers.models.deprecated.nat.modeling_nat"
    assert module_name(Path("hf_models/modeling_bert.py")) == "transformers.models.bert.modeling_bert"
    assert module_name(tmp_path / "helpers.py") == "helpers"
