"""The labelling page's app (`memopt.label`): decisions saved at once and resumed, nothing outside the directory
readable, damage shown as one error and never costing a label. Requests go through Starlette's test client
(the app in process); `tests/label/test_browser.py` drives the served page in Chromium."""

from __future__ import annotations

import json
import shutil

import pytest
from starlette.testclient import TestClient

from memopt.attribution.labels import load_labels
from memopt.label import ReviewSet, label_app
from memopt.label.app import TOKEN_HEADER
from tests.report.planted import attribute, traced_run

TOKEN = "t0ken"


@pytest.fixture(scope="module")
def traced(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("label")
    results, trace, _ = traced_run(tmp, "seed")
    attribute(results, trace)
    return trace


@pytest.fixture
def trace(traced, tmp_path):
    copy = tmp_path / "trace"
    shutil.copytree(traced, copy)
    return copy


def _client(trace, hosts=("testserver",)):
    return TestClient(label_app(ReviewSet.open(trace), hosts=list(hosts), token=TOKEN))


def _post(client, index, body, token=TOKEN):
    return client.post(f"/api/label/{index}", json=body, headers={TOKEN_HEADER: token})


def test_decisions_are_saved_at_once_and_a_new_session_resumes_them(trace):
    client = _client(trace)
    cases = client.get("/api/cases").json()
    assert cases["progress"] == {"reviewed": 0, "total": len(cases["cases"])} and cases["errors"] == []
    case = client.get("/api/case/1").json()
    assert case["question"] and case["expected"] and case["prediction"] and case["date"]
    other = next(o["id"] for o in case["ops"] if o["id"] != case["attributed"]["op_id"])
    assert _post(client, 0, {"decision": "accepted"}).json()["progress"]["reviewed"] == 1
    corrected = _post(client, 1, {"decision": "corrected", "op_id": other, "error_type": "UpdateError"}).json()
    assert corrected["label"]["final_op_id"] == other and corrected["label"]["final_error_type"] == "UpdateError"
    flagged = _post(client, 2, {"decision": "flagged", "flags": ["wrong_expected_answer"], "note": "gold is wrong"})
    assert flagged.json()["label"]["final_error_type"] == "annotation_error"
    saved = load_labels(trace / "labels.jsonl")
    assert saved.counts() == {"accepted": 1, "corrected": 1, "flagged": 1}
    resumed = _client(trace)
    assert resumed.get("/api/cases").json()["progress"]["reviewed"] == 3
    assert resumed.get("/api/case/2").json()["label"]["note"] == "gold is wrong"
    assert _post(resumed, 2, {"decision": None}).json()["label"] is None  # cleared
    assert set(load_labels(trace / "labels.jsonl").labels) == set(saved.labels) - {cases["cases"][2]["case_id"]}


def test_bad_decisions_are_refused_with_one_message_and_nothing_is_written(trace):
    client = _client(trace)
    assert _post(client, 0, {"decision": "accepted"}, token="wrong").status_code == 403
    assert "not an operation of case" in _post(client, 0, {"decision": "corrected", "op_id": "../../etc/passwd",
                                                            "error_type": "UpdateError"}).json()["error"]
    assert "pick one of" in _post(client, 0, {"decision": "corrected", "op_id": "x", "error_type": "Nope"}).json()[
        "error"]
    assert "pick one of" in _post(client, 0, {"decision": "flagged", "flags": ["bogus"]}).json()["error"]
    assert _post(client, 999, {"decision": "accepted"}).status_code == 400
    assert client.post("/api/label/0", content=b"{not json", headers={TOKEN_HEADER: TOKEN}).status_code == 400
    assert not (trace / "labels.jsonl").exists()


def test_no_path_outside_the_directory_is_readable(trace, tmp_path):
    secret = tmp_path / "secret.json"
    secret.write_text(json.dumps({"password": "hunter2-outside"}))
    (trace / "link.json").symlink_to(secret)  # a graph-looking link to a file outside DIR is never read
    client = _client(trace)
    attempts = ["/../secret.json", "/..%2fsecret.json", "/view/..%2F..%2Fsecret.json", "/api/case/..%2Fsecret",
                "/static/../../secret.json", "/%2e%2e/%2e%2e/etc/passwd", "/view/-1", "/view/99999",
                "/api/case/-1", f"/{secret}", "/link.json", "/view/link.json", "/api/../../etc/passwd"]
    for url in attempts:
        response = client.get(url)
        assert response.status_code == 404, url
        assert "hunter2" not in response.text and "root:" not in response.text, url
    everything = client.get("/api/cases").text + "".join(client.get(f"/api/case/{i}").text for i in range(3))
    assert "hunter2" not in everything and "link.json" not in everything


def test_only_the_loopback_names_are_answered_and_pages_forbid_other_origins(trace):
    client = TestClient(label_app(ReviewSet.open(trace), hosts=["127.0.0.1", "localhost"], token=TOKEN),
                        base_url="http://127.0.0.1:8765")
    page = client.get("/")
    assert page.status_code == 200 and "default-src 'self'" in page.headers["content-security-policy"]
    assert TOKEN in page.text
    assert client.get("/", headers={"host": "attacker.example"}).status_code == 400
    assert client.get("/view/0").headers["content-security-policy"].endswith("frame-ancestors 'self'")


def test_a_damaged_graph_is_one_error_and_the_other_cases_still_label(trace):
    (trace / "plant-1.json").write_text("{cut")
    client = _client(trace)
    state = client.get("/api/cases").json()
    [error] = state["errors"]
    assert "plant-1.json" in error and "not valid JSON" in error
    broken = [c for c in state["cases"] if c["error"]]
    assert broken and all(c["case_id"].startswith("plant-1:") for c in broken)
    index = broken[0]["index"]
    assert "cannot be labelled" in _post(client, index, {"decision": "accepted"}).json()["error"]
    assert client.get(f"/view/{index}").status_code == 404
    ok = next(c["index"] for c in state["cases"] if not c["error"])
    assert _post(client, ok, {"decision": "accepted"}).status_code == 200


def test_a_damaged_labels_file_is_shown_never_written_over_and_labelling_resumes_once_repaired(trace):
    client = _client(trace)
    assert _post(client, 0, {"decision": "accepted"}).status_code == 200
    good = (trace / "labels.jsonl").read_text()
    damaged = good + '{"query_id": "x", "dec'
    (trace / "labels.jsonl").write_text(damaged)
    client = _client(trace)
    state = client.get("/api/cases").json()
    assert state["readonly"] and "labels.jsonl: line 2: not JSON" in state["errors"][0]
    refused = _post(client, 1, {"decision": "accepted"})
    assert refused.status_code == 400 and "not saved while the labels file is damaged" in refused.json()["error"]
    assert (trace / "labels.jsonl").read_text() == damaged  # the label made before is still there
    (trace / "labels.jsonl").write_text(good)  # the reviewer repairs it; the page reads it again
    state = client.get("/api/cases").json()
    assert not state["readonly"] and state["errors"] == [] and state["progress"]["reviewed"] == 1
    assert _post(client, 1, {"decision": "accepted"}).json()["progress"]["reviewed"] == 2
