"""`make report`'s patch-correctness section reads `make verify`'s summary when there is one."""

from __future__ import annotations

from evaluation.report import build


def test_patch_correctness_comes_from_the_verification_summary(tmp_path):
    verify = tmp_path / "verify"
    verify.mkdir()
    (verify / "summary.tsv").write_text("rule\tpatches\tverified\tfailed\tnot_instantiable\tnot_exercised\n"
                                        "softmax\t4\t3\t0\t1\t0\ntotal\t4\t3\t0\t1\t0\n")
    text = build(tmp_path / "eval", tmp_path / "bench", tmp_path / "zoo", tmp_path / "out", verify)
    assert "3 of 4 verified (75.0%), 0 failed" in text
    missing = build(tmp_path / "eval", tmp_path / "bench", tmp_path / "zoo", tmp_path / "out", tmp_path / "none")
    assert "Not run: `make patch && make verify`" in missing
