"""`make bench-models` bookkeeping (evaluation/bench/models.py): variants found on disk and
the ratios against vanilla. The timings themselves are measured by the benchmark, never here;
the last test only checks that a modern model runs through it (a tiny smoke run)."""

from __future__ import annotations

import subprocess

import pytest

from evaluation.bench import models


def _row(model, variant, mode, speed, mem, latency=""):
    return {"device": "cpu", "model": model, "variant": variant, "mode": mode,
            "samples_per_s": speed, "peak_mem_mb": mem, "latency_ms": latency}


def test_summary_is_each_variant_against_vanilla_and_the_mean_over_models():
    rows = [_row("a", "vanilla", "train", 10.0, 100.0), _row("a", "vanilla", "infer", 40.0, 50.0, 20.0),
            _row("a", "all", "train", 15.0, 80.0), _row("a", "all", "infer", 50.0, 40.0, 10.0),
            _row("b", "vanilla", "train", 4.0, 200.0), _row("b", "vanilla", "infer", 8.0, 90.0, 50.0),
            _row("b", "all", "train", 2.0, 200.0), _row("b", "all", "infer", 8.0, 90.0, 50.0)]
    summary = {(r["model"], r["variant"]): r for r in models.summarise(rows)}
    assert summary[("a", "all")]["train_speedup"] == pytest.approx(1.5)
    assert summary[("a", "all")]["train_mem_ratio"] == pytest.approx(0.8)
    assert summary[("a", "all")]["infer_latency_ratio"] == pytest.approx(0.5)
    assert summary[("b", "all")]["train_speedup"] == pytest.approx(0.5)
    assert summary[("mean", "all")]["train_speedup"] == pytest.approx(1.0)
    assert summary[("mean", "vanilla")]["train_speedup"] == pytest.approx(1.0)


def test_variants_are_the_patched_copies_that_exist(tmp_path, monkeypatch):
    monkeypatch.setattr(models, "ROOT", tmp_path)
    for folder in ("softmax", "all"):
        (tmp_path / "build" / "patched-torch" / folder).mkdir(parents=True)
        (tmp_path / "build" / "patched-torch" / folder / "modeling_bert.py").write_text("")
    (tmp_path / "build" / "patched-torch" / "bias_gelu").mkdir()
    assert models.variants("bert") == ["vanilla", "rule:softmax", "all", "compile(vanilla)"]
    assert models.variants("bert", extra=True)[-1] == "compile(all)"
    assert models.variants("gpt2") == ["vanilla", "compile(vanilla)"]
    (tmp_path / "build" / "patched-default" / "all").mkdir(parents=True)
    (tmp_path / "build" / "patched-default" / "all" / "modeling_bert.py").write_text("")
    assert models.variants("bert") == ["vanilla", "rule:softmax", "all", "default", "compile(vanilla)",
                                       "compile(default)"]


def test_modern_variants_keep_the_wheel_layout(tmp_path, monkeypatch):
    monkeypatch.setattr(models, "ROOT", tmp_path)
    inside = ("transformers", "models", "llama", "modeling_llama.py")
    for folder in ("rms_norm", "all"):
        path = tmp_path.joinpath("build", "patched-bench-modern", "torch", folder, *inside)
        path.parent.mkdir(parents=True)
        path.write_text("")
    assert models.source("llama", "vanilla") == tmp_path.joinpath("modern_models", models.MODERN_CORPUS, *inside)
    assert models.source("llama", "compile(default)") == tmp_path.joinpath(
        "build", "patched-bench-modern", "default", "all", *inside)
    assert models.variants("llama") == ["vanilla", "rule:rms_norm", "all", "compile(vanilla)"]


def test_a_model_the_default_set_leaves_unchanged_reuses_its_vanilla_rows(tmp_path, monkeypatch):
    monkeypatch.setattr(models, "ROOT", tmp_path)
    assert not models.unpatched_by_default("t5")  # the default set was not applied yet: nothing to say
    (tmp_path / "build" / "patches-default" / "all").mkdir(parents=True)
    (tmp_path / "build" / "patches-default" / "all" / "patches.tsv").write_text("file\n")
    assert models.unpatched_by_default("t5")
    rows = [_row("t5", "vanilla", "train", 10.0, 100.0), _row("t5", "vanilla", "infer", 40.0, 50.0, 20.0),
            _row("t5", "compile(vanilla)", "train", 12.0, 90.0), _row("t5", "all", "train", 9.0, 100.0)]
    aliases = models.alias_rows(rows, "t5")
    assert [(r["variant"], r["mode"], r["same_as"]) for r in aliases] == [
        ("default", "train", "vanilla"), ("default", "infer", "vanilla"),
        ("compile(default)", "train", "compile(vanilla)")]
    assert aliases[2]["samples_per_s"] == 12.0
    summary = {(r["model"], r["variant"]): r for r in models.summarise(rows + aliases)}
    assert summary[("t5", "default")]["train_speedup"] == 1.0 and summary[("t5", "default")]["same_as"] == "vanilla"
    assert summary[("mean:paper9", "compile(default)")]["train_speedup"] == pytest.approx(1.2)
    assert ("mean:modern3", "default") not in summary


def test_the_plot_has_a_panel_per_ratio(tmp_path):
    import pandas as pd

    from evaluation.bench import plot_models

    rows = [_row("a", "vanilla", "train", 10.0, 100.0), _row("a", "vanilla", "infer", 40.0, 50.0, 20.0),
            _row("a", "all", "train", 15.0, 80.0), _row("a", "all", "infer", 50.0, 40.0, 10.0)]
    out = tmp_path / "summary.png"
    plot_models.plot(pd.DataFrame(models.summarise(rows)), "test", out)
    assert out.stat().st_size > 10_000 and out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_repeats_are_reduced_to_medians_per_variant_and_mode():
    runs = [dict(_row("a", "all", "train", speed, 100.0), run=i) for i, speed in enumerate((10.0, 30.0, 20.0))]
    runs += [dict(_row("a", "all", "infer", 5.0, 50.0, latency), run=i) for i, latency in enumerate((3.0, 1.0, 2.0))]
    (train, infer) = sorted(models.medians(runs), key=lambda r: r["mode"], reverse=True)
    assert train["mode"] == "train" and train["samples_per_s"] == 20.0 and train["latency_ms"] == ""
    assert infer["latency_ms"] == 2.0 and infer["peak_mem_mb"] == 50.0


@pytest.mark.venv
def test_smoke_run_of_a_modern_model_on_cpu(tmp_path):
    """One modern model (Llama, transformers 5.23.0) through the benchmark: the driver in
    .venv-verify, its child in .venv-verify5, one variant, tiny sizes, one step."""
    driver, modern = models.ROOT / ".venv-verify" / "bin" / "python", models.ROOT / ".venv-verify5" / "bin" / "python"
    if not (driver.exists() and modern.exists()):
        pytest.skip("needs .venv-verify and .venv-verify5 (make verify-setup verify5-setup)")
    if not models.source("llama", "vanilla").is_file():
        pytest.skip("needs the modern corpus (make zoo-modern)")
    done = subprocess.run([str(driver), "-m", "evaluation.bench.models", "--device", "cpu", "--models", "llama",
                           "--variants", "vanilla", "--steps", "1", "--warmup", "1", "--batch", "2", "--tokens", "16",
                           "--modern-python", str(modern), "--out", str(tmp_path)],
                          cwd=models.ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "transformers 5.23.0" in done.stdout
    rows = (tmp_path / "models.tsv").read_text().splitlines()
    header = rows[0].split("\t")
    found = {(r["variant"], r["mode"]): r for r in (dict(zip(header, line.split("\t"))) for line in rows[1:])}
    train = found[("vanilla", "train")]
    assert train["model"] == "llama" and float(train["samples_per_s"]) > 0
    assert float(train["tokens_per_s"]) == pytest.approx(16 * float(train["samples_per_s"]), rel=1e-3)
    assert float(found[("vanilla", "infer")]["latency_ms"]) > 0
    assert "llama\tvanilla\t1.000" in (tmp_path / "models_summary.tsv").read_text()
