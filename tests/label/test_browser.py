"""`memopt label` in a real headless Chromium: three cases labelled from the keyboard (one accepted, one corrected
with the op picked in the graph, one flagged), kept across a reload; then `memopt bench attribution --labels` scores
against them and `memopt attribute` leaves the flagged case out of its counts. The page makes no request outside
the server. Its screenshot goes to docs/images/ with ``MEMOPT_UPDATE_SCREENSHOTS=1``.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests import browser
from tests.conftest import ROOT
from tests.report.planted import traced_run

pytestmark = [pytest.mark.slow, pytest.mark.skipif(not browser.available(), reason=f"needs {browser.CHROMIUM}")]
ENV = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}


def memopt(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    """Run a memopt command of this checkout."""
    done = subprocess.run([sys.executable, "-m", "memopt", *args], cwd=cwd, env=ENV, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr
    return done


def serve(trace: Path, cwd: Path) -> tuple[subprocess.Popen, str]:
    """``memopt label TRACE --port 0`` in the background, and the address it says to open."""
    proc = subprocess.Popen([sys.executable, "-m", "memopt", "label", str(trace), "--port", "0"], cwd=cwd, env=ENV,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    deadline = time.monotonic() + 120
    assert proc.stdout is not None
    for line in proc.stdout:
        if found := re.search(r"open (http://127\.0\.0\.1:\d+/)", line):
            return proc, found.group(1)
        if time.monotonic() > deadline:
            break
    proc.terminate()
    raise AssertionError(f"memopt label did not start: {proc.stdout.read() if proc.stdout else ''}")


def _frame(b: browser.Chromium, script: str):
    return b.run(f"(() => {{ const d = document.getElementById('view').contentDocument; return {script}; }})()")


def test_label_three_cases_in_chromium_then_bench_and_attribute_read_them(tmp_path):
    results, trace, failed = traced_run(tmp_path, "seed")
    memopt("attribute", "--results", str(results), "--trace", str(trace), "--out", str(trace / "attributions.jsonl"),
           cwd=tmp_path)
    total = len(failed)
    proc, url = serve(trace, tmp_path)
    try:
        with browser.Chromium(1500, 900) as b:
            b.open(url, f"0 / {total} reviewed")
            # the viewer of case i: the frame has gone to /view/i (until then it still shows the case before)
            viewer_ready = ("!!(d && d.location.pathname === '/view/{}' && d.querySelector('canvas') "
                            "&& d.getElementById('find'))")
            b.wait(lambda: _frame(b, viewer_ready.format(0)), what="the graph viewer")
            first = b.run("document.getElementById('case-id').textContent")
            b.key("a")  # accept
            b.wait_for(f"1 / {total} reviewed")
            b.wait(lambda: b.run("document.getElementById('case-id').textContent") != first, what="the next case")
            b.wait(lambda: _frame(b, viewer_ready.format(1)), what="the graph viewer of the second case")
            second = b.run("document.getElementById('case-id').textContent")
            b.key("c")  # correct: pick another op in the graph (the viewer's search selects it), then a type
            ops = b.run("Array.from(document.getElementById('ops').options).map(o => o.value)")
            blamed = b.run("document.getElementById('blamed').textContent")
            drawn = set(_frame(b, "JSON.parse(d.getElementById('graph-data').textContent).nodes.map(n => n.id)"))
            other = next(op for op in reversed(ops) if op != blamed and op in drawn)
            _frame(b, "d.getElementById('find').focus()")
            b.type(other)
            b.key("Enter")
            b.wait(lambda: b.run("document.getElementById('ops').value") == other, what="the op picked in the graph")
            b.run("document.getElementById('ops').focus()")
            b.key("2")  # UpdateError
            shot = b.screenshot(tmp_path / "label-page.png")
            b.key("Enter")
            b.wait_for(f"2 / {total} reviewed")
            b.wait(lambda: b.run("document.getElementById('case-id').textContent") != second, what="the next case")
            third = b.run("document.getElementById('case-id').textContent")
            b.key("f")
            b.key("1")  # wrong expected answer
            b.key("n")
            b.type("the gold answer is wrong")
            b.key("Enter")
            b.wait_for(f"3 / {total} reviewed")
            b.open(url, f"3 / {total} reviewed")  # a reload: the labels were saved, not kept in the page
            listed = b.text()
            assert f"✓ {first}" in listed and f"✎ {second}" in listed and f"⚑ {third}" in listed
            requests = b.requests()
            assert requests and all(r.startswith(url) for r in requests), requests
    finally:
        proc.terminate()
        proc.wait(30)
    labels = [json.loads(line) for line in (trace / "labels.jsonl").read_text().splitlines()]
    by_case = {a["query_id"]: a for a in labels}
    assert by_case[first]["decision"] == "accepted"
    assert (by_case[second]["decision"], by_case[second]["op_node"], by_case[second]["final_error_type"]) == (
        "corrected", other, "UpdateError")
    assert by_case[third]["flags"] == ["wrong_expected_answer"] and by_case[third]["note"] == "the gold answer is wrong"
    assert shot.stat().st_size > 20_000

    bench = memopt("bench", "attribution", "--labels", str(trace / "labels.jsonl"), "--out", "bench.json",
                   cwd=tmp_path)
    scored = json.loads((tmp_path / "bench.json").read_text())
    assert scored["decisions"] == {"accepted": 1, "corrected": 1, "flagged": 1} and scored["left_out"] == 1
    assert scored["results"] and all(row["n"] == 2 for row in scored["results"]), bench.stdout
    memtrace = next(r for r in scored["results"] if r["method"] == "memtrace")
    assert memtrace["type_accuracy"] == 0.5  # it agrees with the accepted case, not with the correction
    done = memopt("attribute", "--results", str(results), "--trace", str(trace), "--out", "again.jsonl", cwd=tmp_path)
    again = [json.loads(line)["case_id"] for line in (tmp_path / "again.jsonl").read_text().splitlines()]
    assert third not in again and f"{total - 1} failed cases" in done.stdout
    if os.environ.get("MEMOPT_UPDATE_SCREENSHOTS"):
        shutil.copy(shot, ROOT / "docs" / "images" / "label-page.png")
