"""The modern corpus fetcher (evaluation/zoo_modern.py) on a fake wheel: which files it
extracts and where, the manifest it writes and then enforces, and the seeded sample.
No network: the download is replaced by a zip built here."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

from evaluation import zoo_modern
from evaluation.zoo_modern import Corpus, build_corpora, defines_model, draw_sample, is_transformers_model

MODEL = "import torch\nfrom torch import nn\n\n\nclass BertLayer(nn.Module):\n    pass\n"
WHEEL_FILES = {
    "transformers/__init__.py": "",
    "transformers/models/bert/configuration_bert.py": "class BertConfig: pass\n",
    "transformers/models/bert/modeling_bert.py": MODEL,
    "transformers/models/bert/modeling_tf_bert.py": "class TFBertLayer: pass\n",
    "transformers/models/bert/modeling_flax_bert.py": "class FlaxBertLayer: pass\n",
    "transformers/models/deprecated/mctct/modeling_mctct.py": MODEL,
    "transformers-0.0.0.dist-info/METADATA": "Name: transformers\n",
}
EXTRACTED = ["transformers/models/bert/modeling_bert.py", "transformers/models/deprecated/mctct/modeling_mctct.py"]
FAKE = (Corpus("transformers", "0.0.0", is_transformers_model),)


def fake_wheel(folder: Path, files: dict[str, str]) -> Path:
    wheel = folder / "transformers-0.0.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        for name, text in files.items():
            archive.writestr(name, text)
    return wheel


@pytest.fixture
def wheel_files(tmp_path, monkeypatch) -> dict[str, str]:
    """The files of the wheel the (fake) download returns; edit it before a build."""
    files = dict(WHEEL_FILES)
    monkeypatch.setattr(zoo_modern, "download_wheel", lambda package, version, into: fake_wheel(into, files))
    return files


def test_extracts_model_files_under_their_wheel_path(tmp_path, wheel_files, capsys):
    dest = tmp_path / "modern"
    assert build_corpora(dest, tmp_path / "MANIFEST.tsv", FAKE) == 0
    corpus = dest / "transformers-0.0.0"
    assert sorted(p.relative_to(corpus).as_posix() for p in corpus.rglob("*.py")) == EXTRACTED
    assert (corpus / EXTRACTED[0]).read_text() == MODEL
    assert "transformers-0.0.0: 2 files" in capsys.readouterr().out


def test_manifest_is_written_then_enforced(tmp_path, wheel_files, capsys):
    manifest = tmp_path / "MANIFEST.tsv"
    assert build_corpora(tmp_path / "a", manifest, FAKE) == 0
    rows = manifest.read_text().splitlines()
    assert rows[0] == "corpus\tpath\tsha256"
    assert [r.split("\t")[:2] for r in rows[1:]] == [["transformers-0.0.0", p] for p in EXTRACTED]

    assert build_corpora(tmp_path / "b", manifest, FAKE) == 0
    for path in EXTRACTED:
        assert (tmp_path / "b" / "transformers-0.0.0" / path).read_bytes() == (tmp_path / "a" / "transformers-0.0.0" / path).read_bytes()

    wheel_files[EXTRACTED[0]] = MODEL.replace("pass", "pas ")
    assert build_corpora(tmp_path / "c", manifest, FAKE) == 1
    assert f"transformers-0.0.0/{EXTRACTED[0]}: sha256" in capsys.readouterr().err
    assert not (tmp_path / "c").exists()  # nothing is written from a wheel that does not match


def test_a_file_missing_from_the_wheel_is_an_error(tmp_path, wheel_files, capsys):
    manifest = tmp_path / "MANIFEST.tsv"
    build_corpora(tmp_path / "a", manifest, FAKE)
    del wheel_files[EXTRACTED[1]]
    assert build_corpora(tmp_path / "b", manifest, FAKE) == 1
    assert f"{EXTRACTED[1]}: listed in MANIFEST.tsv, not in the wheel" in capsys.readouterr().err


@pytest.mark.parametrize("source, expected", [
    ("class A(nn.Module): pass", True),
    ("class A(torch.nn.Module): pass", True),
    ("class A(Module): pass", True),
    ("class A(BertPreTrainedModel): pass", True),
    ("class A(ModelMixin, ConfigMixin): pass", True),
    ("class A(modeling_utils.ModelMixin): pass", True),
    ("class A(Config): pass", False),
    ("def f(): return nn.Module", False),
])
def test_eligible_files_define_a_module_or_pretrained_model(source, expected):
    assert defines_model(source) is expected


def test_the_sample_is_the_same_for_the_same_seed():
    eligible = [(f"pkg/models/m{i:03}.py", 100 + i) for i in range(200)]
    first = draw_sample(eligible, 18, seed=7)
    assert first == draw_sample(list(reversed(eligible)), 18, seed=7)  # the input order does not matter
    assert len(set(first)) == 18 and set(first) <= set(eligible) and first == sorted(first)
