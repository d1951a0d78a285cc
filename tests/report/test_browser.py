"""`memopt report` pages in a real headless Chromium, on the three sources a team has: the quickstart's round 0 (an
optimize run in MLflow), an attach recording (`memopt attach mem0 --offline`, the real Mem0) and a MemTraceBench
directory. Each page opens offline (every request it and its case views make is a file of the report), its
figures equal `memopt attribute`'s counts, and every case link opens that case's graph view. Screenshots go to
docs/images/ with ``MEMOPT_UPDATE_SCREENSHOTS=1``.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from memopt.attribution.attribute_run import summarize_attributions
from memopt.attribution.types import Attribution, load_attributions
from tests import browser
from tests.conftest import ROOT
from tests.label.test_browser import memopt

pytestmark = [pytest.mark.slow, pytest.mark.skipif(not browser.available(), reason=f"needs {browser.CHROMIUM}")]


def check_page(page: Path, counts: dict, shots: Path | None = None) -> int:
    """Open a report page and every case link in Chromium; check the figures, the links and the requests made."""
    folder = page.parent.resolve().as_uri()
    with browser.Chromium(1200, 900) as b:
        b.open(page.resolve().as_uri(), "Recurring mechanisms")
        shown = b.run("Object.fromEntries(Array.from(document.querySelectorAll('[data-figure=by_error_type] "
                      "td[data-type]')).map(td => [td.dataset.type, +td.textContent]))")
        assert shown == counts["by_error_type"]
        assert b.run("+document.querySelector('[data-figure=n] b').textContent") == counts["n"]
        ops = b.run("Object.fromEntries(Array.from(document.querySelectorAll('[data-figure=by_operation] "
                    "td[data-op]')).map(td => [td.dataset.op, +td.textContent]))")
        assert ops == counts["by_operation"]
        if shots is not None:
            b.screenshot(shots / "report-page.png")
            b.run("document.getElementById('group-1').scrollIntoView()")
            b.screenshot(shots / "report-group.png")
        links = b.run("Array.from(document.querySelectorAll('a[data-case]')).map(a => [a.href, a.dataset.case])")
        assert links
        for href, case_id in links:
            b.open(href, "Evidence path")
            b.wait(lambda case_id=case_id: bool(b.run("!!document.querySelector('canvas')"))
                   and case_id in b.run("document.title"), what=f"the graph view of {case_id}")
            assert b.run("document.getElementById('banner').textContent").startswith("Blamed operation")
        requests = b.requests()
    assert requests and all(r.startswith(folder + "/") for r in requests), [r for r in requests
                                                                          if not r.startswith(folder)]
    return len(links)


def test_quickstart_round_0_report_from_mlflow(tmp_path):
    import mlflow

    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    memopt("optimize", str(ROOT / "experiments" / "quickstart.yaml"), "--rounds", "1", "--tracking-uri", uri,
           "--out", "summary.json", cwd=tmp_path)
    run_id = json.loads((tmp_path / "summary.json").read_text())["run_id"]
    client = mlflow.MlflowClient(uri)
    parent = client.get_run(run_id)
    assert "report/round-0/report.html" in parent.data.tags["mlflow.note.content"]
    nested = f"tags.`mlflow.parentRunId` = '{run_id}' and tags.`memopt.round` = '1'"
    [round_1] = client.search_runs([parent.info.experiment_id], filter_string=nested)
    logged = Path(client.download_artifacts(round_1.info.run_id, "attributions.jsonl", str(tmp_path)))
    counts = summarize_attributions(load_attributions(logged))
    memopt("report", run_id, "--round", "0", "--tracking-uri", uri, "--out", "round-0", cwd=tmp_path)
    shots = tmp_path / "shots"
    shots.mkdir()
    assert check_page(tmp_path / "round-0" / "report.html", counts, shots) >= 3
    assert "round 0" in (tmp_path / "round-0" / "report.md").read_text()
    memopt("report", run_id, "--round", "final", "--tracking-uri", uri, "--out", "final", cwd=tmp_path)
    final = json.loads((tmp_path / "final" / "report.json").read_text())
    assert final["rounds"] == [{"round": 1, "failures": {k.removeprefix("failures."): int(v) for k, v in
                                                        round_1.data.metrics.items() if k.startswith("failures.")}}]
    if os.environ.get("MEMOPT_UPDATE_SCREENSHOTS"):
        for png in shots.glob("*.png"):
            shutil.copy(png, ROOT / "docs" / "images" / png.name)


def test_attach_recording_report(tmp_path):
    if importlib.util.find_spec("mem0") is None:
        pytest.skip('needs the mem0 extra: pip install -e ".[mem0]"')
    memopt("export", str(ROOT / "prompts"), "--pipeline", "mem0", "--format", "mem0", "--out", "mem0.json",
           cwd=tmp_path)
    memopt("attach", "mem0", "--config", "mem0.json", "--data", "synthetic:conversations=2,sessions=4,seed=5",
           "--offline", "--trace", "trace", "--out", "results.json", cwd=tmp_path)
    memopt("attribute", "--results", "results.json", "--trace", "trace", "--judge-lm", "lexical", "--out",
           "trace/attributions.jsonl", cwd=tmp_path)
    assert (tmp_path / "trace" / "records.jsonl").is_file()
    memopt("report", "trace", "--out", "report", cwd=tmp_path)
    counts = summarize_attributions(load_attributions(tmp_path / "trace" / "attributions.jsonl"))
    check_page(tmp_path / "report" / "report.html", counts)
    assert json.loads((tmp_path / "report" / "report.json").read_text())["kind"] == "attach"


def _attribute_memtracebench(directory: Path) -> list[Attribution]:
    """memtrace on every memory-error annotation of a MemTraceBench directory, the cases built as
    `memopt bench attribution --memtracebench` builds them."""
    from memopt.attribution.case import FailedCase
    from memopt.attribution.evidence import seed_evidence
    from memopt.attribution.methods import attribute
    from memopt.judge.judges import LexicalJudge
    from memopt.trace.graph import answer_of
    from memopt.trace.memtracebench import load_memtrace

    found = []
    for path in sorted(directory.glob("*/*.json")):
        G, annotations = load_memtrace(path, split=path.parent.name)
        turns = {d["sc_id"]: d["name"].removeprefix("turn:") for _, d in G.nodes(data=True)
                 if d.get("kind") == "turn" and "sc_id" in d}
        for a in annotations:
            if not a.memory_error or a.case_key is None or answer_of(G, a.case_key) is None:
                continue
            gold = a.golden_answers[0] if a.golden_answers else ""
            given = tuple(turns.get(e) or e.rpartition("@")[0] or e for e in a.source_evidence_ids)
            evidence, pseudo = seed_evidence(G, a.query, gold, given)
            case = FailedCase(G, f"{G.graph['conversation']}:{a.case_key}", a.query, gold, evidence,
                              a.prediction or "", 0, pseudo)
            found.append(attribute(case, LexicalJudge(), "memtrace"))
    return found


def test_memtracebench_directory_report(tmp_path):
    from memopt.attribution.types import save_attributions

    directory = tmp_path / "memtracebench"
    done = subprocess.run([sys.executable, "-m", "tests.memtracebench_fixtures", str(directory)], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    found = _attribute_memtracebench(directory)
    save_attributions(found, directory / "attributions.jsonl")
    memopt("report", str(directory), "--out", "report", cwd=tmp_path)
    check_page(tmp_path / "report" / "report.html", summarize_attributions(found))
    data = json.loads((tmp_path / "report" / "report.json").read_text())
    assert data["kind"] == "memtracebench" and data["n"] == len(found)
