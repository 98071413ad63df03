"""`make bench-models` bookkeeping (evaluation/bench/models.py): variants found on disk and
the ratios against vanilla. The timings themselves are measured by the benchmark, never here."""

from __future__ import annotations

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
    assert models.variants("bert") == ["vanilla", "rule:softmax", "all", "compile(vanilla)", "compile(all)"]
    assert models.variants("gpt2") == ["vanilla", "compile(vanilla)"]


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
