"""`memopt report`: mechanisms grouped from attributions, figures equal to `memopt attribute`'s, pages offline.

The grouping test builds its data (`tests.report.planted`): two mechanisms planted by leaving two directives out
of mem0's prompts, each case's mechanism told by whether putting that directive back rescues it.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from memopt.attribution.attribute_run import summarize_attributions
from memopt.attribution.types import load_attributions
from memopt.core.errors import ConfigError, DataError
from memopt.report import build_report, load_diagnosis, read_report, report_files, write_report
from memopt.report.build import read_overview
from memopt.report.mechanisms import bearing_sentences
from memopt.report.sources import read_attribution_lines
from tests.report.planted import EVERY_SPEAKER, ONE_SPEAKER, attribute, traced_run


@pytest.fixture(scope="module")
def planted(tmp_path_factory):
    """The seed prompts' run (both directives missing) and the runs with either directive put back."""
    tmp = tmp_path_factory.mktemp("planted")
    results, trace, failed = traced_run(tmp, "seed")
    _, _, with_speakers = traced_run(tmp, "speakers", every_speaker=True)
    _, _, with_compat = traced_run(tmp, "compat", only_on_contradiction=True)
    attribute(results, trace)
    return {"trace": trace, "results": results, "failed": failed, "one_speaker": failed - with_speakers,
            "overwrite": failed - with_compat}


def test_each_planted_mechanism_is_a_group_of_its_own(planted):
    one_speaker, overwrite = planted["one_speaker"], planted["overwrite"]
    assert len(one_speaker) >= 4 and len(overwrite) >= 2 and not one_speaker & overwrite
    report = build_report(load_diagnosis(planted["trace"]))
    group_of = {case: g["key"] for g in report["groups"] for case in g["cases"]}
    members = {g["key"]: set(g["cases"]) for g in report["groups"]}
    [speaker_group] = {group_of[c] for c in one_speaker}
    [overwrite_group] = {group_of[c] for c in overwrite}
    assert speaker_group != overwrite_group
    assert members[speaker_group] == one_speaker and members[overwrite_group] == overwrite
    # the same op and error type hold a failure of another mechanism: only "what was lost" keeps it apart
    attributions = load_attributions(planted["trace"] / "attributions.jsonl")
    blamed = {a.case_id: (a.operation, a.error_type) for a in attributions}
    same_place = {c for c in planted["failed"] - one_speaker
                  if blamed.get(c) == blamed[next(iter(one_speaker))]}
    assert same_place and not same_place & members[speaker_group]
    group = next(g for g in report["groups"] if g["key"] == speaker_group)
    assert group["sentences"][0].startswith(ONE_SPEAKER.split(".")[0])  # the sentence that restricts the speakers
    assert "every speaker" in group["advice"]


def test_report_figures_equal_memopt_attribute_counts_and_every_link_is_written(planted, tmp_path):
    diagnosis = load_diagnosis(planted["trace"])
    report = build_report(diagnosis)
    counts = summarize_attributions(load_attributions(planted["trace"] / "attributions.jsonl"))
    assert report["n"] == counts["n"]
    assert report["counts"]["by_error_type"] == counts["by_error_type"]
    assert report["counts"]["by_operation"] == counts["by_operation"]
    page = write_report(report_files(report, diagnosis), tmp_path / "out")
    html = page.read_text()
    for error_type, n in counts["by_error_type"].items():
        assert f'data-type="{error_type}">{n}</td>' in html
    links = re.findall(r'href="([^"]+)"', html)
    assert links and all((page.parent / link).is_file() for link in links)
    assert not re.search(r'(src|href)="(https?:)?//', html), "the page loads nothing from the network"
    assert "<script" not in html
    markdown = (page.parent / "report.md").read_text()
    assert all(f"]({link})" in markdown for link in links)
    again, views = read_report(page.parent)
    assert again["counts"] == report["counts"] and set(views) == set(links)


def test_flagged_cases_leave_the_report_and_masked_faults_are_counted_apart(planted, tmp_path):
    lines = (planted["trace"] / "attributions.jsonl").read_text().splitlines()
    first, second = json.loads(lines[0]), json.loads(lines[1])
    behind = {**second, "op_id": "answer:x", "operation": "answer", "error_type": "ResponseError",
              "details": {"masked_by": second["op_id"]}, "team_note": "a field memopt does not know"}
    path = tmp_path / "attributions.jsonl"
    path.write_text("\n".join([*lines, json.dumps(behind)]) + "\n")
    report = build_report(load_diagnosis(planted["trace"], attributions=path, flagged=frozenset({first["case_id"]})))
    assert report["n"] == len(lines) - 1 and report["behind"] == 1 and report["flagged"] == 1
    assert all(first["case_id"] not in g["cases"] for g in report["groups"])
    [(attribution, extras)] = [x for x in read_attribution_lines(path) if x[0].masked_by]
    assert extras == {"team_note": "a field memopt does not know"}


def test_a_damaged_graph_is_named_and_its_cases_are_left_out(planted, tmp_path):
    import shutil

    trace = tmp_path / "trace"
    shutil.copytree(planted["trace"], trace)
    (trace / "plant-1.json").write_text('{"schema": "memopt.evolution_graph", "nodes": [')
    diagnosis = load_diagnosis(trace)
    assert list(diagnosis.damaged) == ["plant-1.json"] and "not valid JSON" in diagnosis.damaged["plant-1.json"]
    assert diagnosis.unplaced and all(c.startswith("plant-1:") for c in diagnosis.unplaced)
    html = report_files(build_report(diagnosis), diagnosis)["report.html"]
    assert "Damaged graph plant-1.json" in html
    (trace / "attributions.jsonl").write_text('{"case_id": "x"}\n')
    with pytest.raises(DataError, match=r"attributions.jsonl: line 1: not an attribution"):
        load_diagnosis(trace)
    with pytest.raises(DataError, match="no attributions beside the graphs; write them with `memopt attribute"):
        load_diagnosis(_graphs_only(planted["trace"], tmp_path / "bare"))


def _graphs_only(trace: Path, out: Path) -> Path:
    out.mkdir()
    for graph in trace.glob("*.json"):
        (out / graph.name).write_bytes(graph.read_bytes())
    return out


def test_bearing_sentences_and_the_system_prior(tmp_path):
    prompt = f"You organise facts. {ONE_SPEAKER}\nKeep dates as written. Reply in JSON."
    assert bearing_sentences(prompt, "speaker")[0].startswith("[IMPORTANT]")
    assert bearing_sentences("Reply in JSON.", "speaker") == []
    assert EVERY_SPEAKER in bearing_sentences(f"Be brief. {EVERY_SPEAKER}", "speaker")
    prior = tmp_path / "prior.yaml"
    prior.write_text("overview: |\n  A chat memory: extract facts, update them, answer.\n")
    assert read_overview(prior).startswith("A chat memory")
    prior.write_text("stages: {}\n")
    with pytest.raises(ConfigError, match="no 'overview' text"):
        read_overview(prior)


def test_the_writer_refuses_simlm_and_writes_through_a_real_lm_endpoint(planted):
    """A simulated spec is refused (SimLM writes no prose); through the HTTP path (SimLM's server behind LiteLLM)
    every group is asked once and the summary once, the calls counted in the report's cost."""
    from memopt.report.writer import GroupWriter
    from memopt.simlm.server import SimServer

    with pytest.raises(ConfigError, match="SimLM simulates memory operations and writes no prose"):
        GroupWriter("sim")
    diagnosis = load_diagnosis(planted["trace"])
    with SimServer() as server:
        writer = GroupWriter(f"openai/sim@{server.url}")
        report = build_report(diagnosis, writer=writer)
    assert report["cost"]["writer_lm_calls"] == len(report["groups"]) + 1
    assert report["writer"].startswith("openai/sim@") and report["writer_error"] is None
