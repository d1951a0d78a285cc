"""A team's labels (`memopt.attribution.labels`): MemTraceBench annotations in a sidecar, read back, and the flagged
cases leaving `memopt attribute`'s failures."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from memopt.attribution.labels import FLAGS, Label, LabelSet, labels_beside, load_labels
from memopt.core.errors import DataError


def _labels(path):
    return (LabelSet(path)
            .with_label(Label("c:q1", "accepted", "ExtractionError", "extract:c:S1", "extract:c:S1", graph="c.json",
                              query="Who?", golden_answers=("Ann",), prediction="Bo", source_evidence_ids=("D1:2",)))
            .with_label(Label("c:q2", "corrected", "UpdateError", "op-17", "update:c:S2", note="a merge"))
            .with_label(Label("c:q3", "flagged", flags=("wrong_judge_verdict",), note="the answer is right")))


def test_labels_round_trip_as_memtracebench_annotations(tmp_path):
    path = _labels(labels_beside(tmp_path)).save()
    assert path.name == "labels.jsonl"  # not *.json: a trace directory keeps its graphs so
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert [a["query_id"] for a in lines] == ["c:q1", "c:q2", "c:q3"]
    assert lines[0] | {"labelled_at": ""} == {
        "schema": "memopt.labels/1", "query_id": "c:q1", "query": "Who?", "golden_answers": ["Ann"],
        "prediction": "Bo", "source_evidence_ids": ["D1:2"], "final_error_type": "ExtractionError",
        "final_op_id": "extract:c:S1", "decision": "accepted", "flags": [], "note": "", "graph": "c.json",
        "op_node": "extract:c:S1", "attributed": {}, "labelled_at": ""}
    flagged = lines[2]
    assert flagged["final_error_type"] == FLAGS["wrong_judge_verdict"] == "LLMJudgeError"
    assert flagged["final_op_id"] is None and flagged["flags"] == ["wrong_judge_verdict"]
    again = load_labels(path)

    def unstamped(labels):
        return {k: replace(v, labelled_at="") for k, v in labels.labels.items()}

    assert unstamped(again) == unstamped(_labels(path)) and again.flagged == {"c:q3"}
    assert again.labels["c:q2"].final_op_id == "op-17"
    assert again.counts() == {"accepted": 1, "corrected": 1, "flagged": 1}


def test_a_label_without_what_its_decision_needs_is_refused():
    with pytest.raises(ValueError, match="needs a flag"):
        Label("c:q1", "flagged")
    with pytest.raises(ValueError, match="needs final_error_type"):
        Label("c:q1", "corrected", "NotAnError", "op")
    with pytest.raises(ValueError, match="flag 'bogus'"):
        Label("c:q1", "flagged", flags=("bogus",))


def test_a_damaged_labels_file_is_one_clear_error_naming_the_line(tmp_path):
    path = _labels(tmp_path / "labels.jsonl").save()
    good = path.read_text()
    path.write_text(good + '{"query_id": "c:q4", "decis')
    with pytest.raises(DataError, match=r"labels.jsonl: line 4: not JSON .*never writes over it"):
        load_labels(path)
    path.write_text(good.replace('"decision": "accepted"', '"decision": "maybe"'))
    with pytest.raises(DataError, match=r"line 1: decision 'maybe' is not one of"):
        load_labels(path)
    path.write_text(good.replace('"schema": "memopt.labels/1"', '"schema": "other/9"', 1))
    with pytest.raises(DataError, match=r"line 1: schema 'other/9'"):
        load_labels(path)
    assert load_labels(tmp_path / "none.jsonl", missing_ok=True).labels == {}
    with pytest.raises(DataError, match="no such labels file"):
        load_labels(tmp_path / "none.jsonl")


def test_flagged_cases_leave_memopt_attribute_counts(tmp_path):
    """`memopt attribute` reads the labels beside the graphs: a flagged failure is not attributed, nor counted."""
    from typer.testing import CliRunner

    from memopt.cli import app
    from tests.report.planted import traced_run

    results, trace, failed = traced_run(tmp_path, "seed")
    runner = CliRunner()
    first = runner.invoke(app, ["attribute", "--results", str(results), "--trace", str(trace), "--out",
                                str(tmp_path / "a.jsonl")])
    assert first.exit_code == 0, first.output
    flagged = sorted(failed)[0]
    LabelSet(labels_beside(trace)).with_label(Label(flagged, "flagged", flags=("wrong_expected_answer",))).save()
    second = runner.invoke(app, ["attribute", "--results", str(results), "--trace", str(trace), "--out",
                                 str(tmp_path / "b.jsonl")])
    assert second.exit_code == 0, second.output
    before = [json.loads(line)["case_id"] for line in (tmp_path / "a.jsonl").read_text().splitlines()]
    after = [json.loads(line)["case_id"] for line in (tmp_path / "b.jsonl").read_text().splitlines()]
    assert flagged in before and after == [c for c in before if c != flagged]
    assert f"{len(failed)} failed cases" in first.output and f"{len(failed) - 1} failed cases" in second.output
    assert "1 case(s) flagged in" in second.output
