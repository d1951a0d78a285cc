"""`memopt bench evidence` and `memopt bench attribution --scale`: what they report (figures are the bench's job)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.conftest import ROOT

pytest.importorskip("smartcomment")

TUNE = ROOT / "tests" / "fixtures" / "graphs44" / "tune"


@pytest.mark.slow  # over 2 s on a quiet machine (CI runs it with -m slow)
def test_bench_evidence_reports_recall_at_each_k_per_ranking(tmp_path):
    out = tmp_path / "evidence.json"
    done = subprocess.run([sys.executable, "-m", "memopt", "bench", "evidence", str(TUNE), "--k", "8,2",
                           "--out", str(out)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    report = json.loads(out.read_text())
    # the tune half's questions whose gold evidence ids the reader resolves:
    assert report["embedding"] == "sim" and report["questions"] == 39
    assert [r["ranking"] for r in report["rows"]] == ["bm25", "dense", "fused", "fused, question only"]
    for row in report["rows"]:
        assert set(row) >= {"recall@2", "recall@8", "hit@2", "hit@8"} and row["recall@2"] <= row["recall@8"] <= 1
    bad = subprocess.run([sys.executable, "-m", "memopt", "bench", "evidence", str(TUNE), "--k", "two"],
                         capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and "--k 'two': comma-separated whole numbers" in bad.stderr


@pytest.mark.slow  # the quickstart's system runs once, then one attribution process (CI runs it with -m slow)
def test_bench_scale_attributes_every_failure_of_each_size_in_its_own_process():
    from memopt.bench.diagnose import bench_scale

    one, two = bench_scale((1, 2), data="synthetic:conversations=2,sessions=4,seed=0")
    assert (one["size"], two["size"]) == ("1x", "2x") and one["graphs"] == 2 and two["graphs"] == 4
    assert one["cases"] > 0 and two["cases"] == 2 * one["cases"]
    assert one["peak MB"] > 0 and one["cases / s"] > 0
