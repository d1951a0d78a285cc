"""LongMemEval files: the loader (quirks, abstention, question types), format detection, a fuzz of malformed
files, the synthetic writer, and `memopt run` / `attribute` / `optimize` on a LongMemEval file."""

from __future__ import annotations

import copy
import json
import random
import subprocess
import sys
from pathlib import Path

import pytest

from memopt.core.errors import DataError, MemoptError
from memopt.data.longmemeval import QUESTION_TYPES, load_longmemeval, parse_lme_date, write_synthetic_longmemeval
from memopt.data.model import CATEGORIES, NOT_MENTIONED
from memopt.data.source import load_data
from memopt.data.synth import SynthSpec, generate
from tests.conftest import ROOT


def _instance(qid: str = "e47becba", **changes: object) -> dict:
    """A small LongMemEval instance with the quirks real files have."""
    item = {
        "question_id": qid, "question_type": "knowledge-update",
        "question": "How many miles did I run on my longest run?", "answer": 21,
        "question_date": "2023/05/20 (Sat) 10:05",
        "haystack_session_ids": ["sharegpt_1", "answer_2"],
        "haystack_dates": ["2023/05/01 (Mon) 09:14", "2023/05/30 (Tue) 23:40"],
        "haystack_sessions": [
            [{"role": "user", "content": "Can you suggest a stretching routine?", "has_answer": False},
             {"role": "assistant", "content": "Sure: calves, hamstrings, hips."}],
            [{"role": "user", "content": "I ran 21 miles on Sunday, my longest run yet!", "has_answer": True},
             {"role": "assistant", "content": "Great job!", "has_answer": False}],
        ],
        "answer_session_ids": ["answer_2"],
    }
    item.update(changes)
    return item


def _write(tmp_path: Path, data: object, name: str = "lme.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(data))
    return path


def test_an_instance_is_one_conversation_with_one_case(tmp_path: Path) -> None:
    [conv] = load_longmemeval(_write(tmp_path, [_instance()]))
    assert (conv.sample_id, conv.speaker_a, conv.speaker_b) == ("e47becba", "User", "Assistant")
    assert [s.date_time for s in conv.sessions] == ["9:14 am on 1 May, 2023", "11:40 pm on 30 May, 2023"]
    assert conv.sessions[1].date.isoformat() == "2023-05-30"  # after the question date: kept as it is
    assert [(t.dia_id, t.speaker) for t in conv.sessions[1].turns] == [("D2:1", "User"), ("D2:2", "Assistant")]
    [case] = conv.cases
    assert (case.case_id, case.gold, case.evidence) == ("e47becba:q0", "21", ("D2:1",))
    assert case.category == QUESTION_TYPES["knowledge-update"] and CATEGORIES[case.category] == "knowledge-update"


def test_abstention_questions_expect_not_mentioned(tmp_path: Path) -> None:
    abstain = _instance("0a995998_abs", question_type="single-session-user",
                        answer="You did not mention how many miles you ran on Sunday.")
    convs = load_longmemeval(_write(tmp_path, [_instance(), abstain]))
    case = convs[1].cases[0]
    assert (case.gold, case.category) == (NOT_MENTIONED, 5)
    assert {c.cases[0].category for c in convs} == {5, 10}


def test_dates_with_and_without_weekday_and_time() -> None:
    assert parse_lme_date("2023/05/30 (Tue) 23:40").isoformat() == "2023-05-30T23:40:00"
    assert parse_lme_date("2023/5/3").isoformat() == "2023-05-03T00:00:00"
    assert parse_lme_date("2023/02/30 (Thu) 10:00") is None and parse_lme_date("May 30, 2023") is None


def test_load_data_tells_the_formats_apart_and_names_what_it_expected(tmp_path: Path) -> None:
    name, convs = load_data(str(_write(tmp_path, [_instance()])))
    assert name.endswith("lme.json") and convs[0].cases[0].category == 10
    _, locomo = load_data(str(_write(tmp_path, generate(SynthSpec(conversations=1, sessions=2)), "locomo.json")))
    assert locomo[0].sample_id == "synth-0-000"
    for data, found in [({"questions": []}, "an object with keys questions"), ([1, 2], "a list of int"),
                        ([{"id": 1}], "a list of dict with keys id")]:
        path = _write(tmp_path, data, "other.json")
        with pytest.raises(DataError) as err:
            load_data(str(path))
        message = str(err.value)
        assert message.startswith(f"{path}: neither a LoCoMo file") and "LongMemEval" in message and found in message


MALFORMED = [
    ({"question_type": "trivia"}, "[0].question_type: 'trivia' is not a LongMemEval question type"),
    ({"question": None}, "[0].question: missing"),
    ({"question": " \n"}, "[0].question: empty"),
    ({"answer": ["21"]}, "[0].answer: expected a string or a number, found list"),
    ({"haystack_dates": ["2023/05/01 (Mon) 09:14"]}, "[0].haystack_dates: 1 dates for 2 haystack sessions"),
    ({"haystack_dates": ["2023/05/01 (Mon) 09:14", "yesterday"]}, "[0].haystack_dates[1]: 'yesterday' is not a date"),
    ({"question_date": "soon"}, "[0].question_date: 'soon' is not a date"),
    ({"haystack_sessions": [[{"role": "bot", "content": "hi"}], []]},
     "[0].haystack_sessions[0][0].role: expected \"user\" or \"assistant\", found 'bot'"),
    ({"haystack_sessions": [[{"role": "user"}], []]}, "[0].haystack_sessions[0][0].content: missing"),
    ({"haystack_sessions": ["hello", []]}, "[0].haystack_sessions[0]: expected a list of turns, found str"),
    ({"answer_session_ids": [None]}, "[0].answer_session_ids: expected a list of session ids"),
    ({"question_id": "../../etc/x"}, "[0].question_id: '../../etc/x': a question id names files"),
]


@pytest.mark.parametrize(("changes", "message"), MALFORMED, ids=[m for _, m in MALFORMED])
def test_malformed_instances_name_the_file_and_the_json_path(tmp_path: Path, changes: dict, message: str) -> None:
    path = _write(tmp_path, [_instance(**changes)])
    with pytest.raises(DataError) as err:
        load_data(str(path))
    assert str(err.value).startswith(f"{path}: {message}")


def test_duplicate_question_ids_are_an_error(tmp_path: Path) -> None:
    path = _write(tmp_path, [_instance(), _instance()])
    with pytest.raises(DataError, match=r"\[1\]\.question_id: duplicate question_id 'e47becba'"):
        load_data(str(path))


def _nodes(value: object, path: tuple = ()) -> list[tuple]:
    found = [path]
    if isinstance(value, dict):
        found += [p for k, v in value.items() for p in _nodes(v, (*path, k))]
    elif isinstance(value, list):
        found += [p for i, v in enumerate(value) for p in _nodes(v, (*path, i))]
    return found


def _replace(data: object, path: tuple, new: object) -> object:
    if not path:
        return new
    target = data
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = new
    return data


def test_fuzzed_files_give_a_memopt_error_naming_the_file_never_a_traceback(tmp_path: Path) -> None:
    valid = json.loads(json.dumps([_instance(), _instance("0a995998_abs", question_type="multi-session")]))
    text = json.dumps(valid)
    rng = random.Random(13)
    replacements = [None, 0, 7.5, True, "", "2023/13/45", [], {}, [[]], {"role": "user"}, "x" * 3]
    outcomes = {"loaded": 0, "error": 0}
    for n in range(300):
        if n % 3 == 0:
            content = text[:rng.randrange(len(text))]
        else:
            data = copy.deepcopy(valid)
            for _ in range(rng.randint(1, 3)):
                data = _replace(data, rng.choice(_nodes(data)), rng.choice(replacements))
            content = json.dumps(data)
        path = tmp_path / f"fuzz-{n}.json"
        path.write_text(content)
        try:
            load_data(str(path))
            outcomes["loaded"] += 1
        except MemoptError as e:
            assert str(path) in str(e), e
            outcomes["error"] += 1
    assert outcomes["error"] > 150 and outcomes["loaded"] > 5


def test_synthetic_longmemeval_is_deterministic_and_loads_back(tmp_path: Path) -> None:
    spec = SynthSpec(conversations=2, sessions=3, seed=4)
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    stats = write_synthetic_longmemeval(spec, a)
    write_synthetic_longmemeval(spec, b)
    assert a.read_bytes() == b.read_bytes()
    convs = load_longmemeval(a)
    assert len(convs) == stats["questions"] == sum(stats["by_question_type"].values())
    assert sum(c.cases[0].gold == NOT_MENTIONED for c in convs) == stats["abstention"] > 0
    raw = json.loads(a.read_text())
    assert all(c.cases[0].evidence == tuple(f"D{s + 1}:{t + 1}" for s, session in enumerate(r["haystack_sessions"])
                                            for t, turn in enumerate(session) if turn["has_answer"])
               for c, r in zip(convs, raw, strict=True))
    assert set(stats["by_question_type"]) <= set(QUESTION_TYPES)


def _memopt(*args: str, cwd: Path, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "memopt", *args], capture_output=True, text=True, cwd=cwd,
                          timeout=timeout)


@pytest.mark.slow  # a run and an attribution through the CLI (CI runs it with -m slow)
def test_run_and_attribute_on_a_longmemeval_file(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from memopt.cli import app

    made = CliRunner().invoke(app, ["data", "synth", "--conversations", "2", "--sessions", "3", "--seed", "1",
                                    "--format", "longmemeval", "--out", str(tmp_path / "lme.json")])
    assert made.exit_code == 0 and "LongMemEval questions (5 abstention)" in made.output, made.output
    done = _memopt("run", "--pipeline", "mem0", "--data", "lme.json", "--limit", "20", "--trace", "graphs",
                   "--out", "results.json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    results = json.loads((tmp_path / "results.json").read_text())
    assert results["metrics"]["n"] == 20 and len({c["sample_id"] for c in results["cases"]}) == 20
    names = {CATEGORIES[int(k)] for k in results["metrics"]["by_category"]}
    assert names & set(QUESTION_TYPES) and all(name in done.stdout for name in names)
    assert len(list((tmp_path / "graphs").glob("*.json"))) == 20

    from memopt.attribution.attribute_run import attribute_run
    from memopt.evaluate.run import RunResult
    from memopt.judge.judges import LexicalJudge

    run = RunResult.load(tmp_path / "results.json")
    found = attribute_run(run, tmp_path / "graphs", LexicalJudge())
    failed = [c for c in run.cases if c.correct is False]
    assert failed and len(found) == len(failed)


@pytest.mark.slow
def test_optimize_on_a_longmemeval_file(tmp_path: Path) -> None:
    write_synthetic_longmemeval(SynthSpec(conversations=3, sessions=4, seed=1), tmp_path / "lme.json")
    experiment = (ROOT / "experiments" / "quickstart.yaml").read_text()
    experiment = experiment.replace('"synthetic:conversations=12,sessions=8,seed=0"', '"lme.json"')
    (tmp_path / "lme.yaml").write_text(experiment)
    done = _memopt("optimize", "lme.yaml", "--rounds", "1", "--budget", "3000", "--tracking-uri",
                   f"sqlite:///{tmp_path / 'mlflow.db'}", "--out", "summary.json", cwd=tmp_path, timeout=900)
    assert done.returncode == 0, done.stderr
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["baseline"]["test_f1"] is not None and len(summary["rounds"]) == 1


def test_the_question_date_reaches_the_answer_op_and_changes_a_date_arithmetic_answer(tmp_path: Path) -> None:
    """"How many days ago" is counted to the record's question_date, which the answer op reads and the trace keeps."""
    import dataclasses

    import dspy

    import memopt.data
    from memopt.lm.build import make_lm
    from memopt.systems import make_system
    from memopt.trace import trace

    assert memopt.data.load_longmemeval is load_longmemeval  # importable as docs/datasets.md says
    record = _instance("days_ago", question_type="temporal-reasoning", answer="10 days",
                       question="How many days ago did I attend the pottery workshop?",
                       question_date="2023/05/30 (Tue) 23:40",
                       haystack_dates=["2023/05/01 (Mon) 09:14", "2023/05/20 (Sat) 18:02"],
                       haystack_sessions=[
                           [{"role": "user", "content": "Can you suggest a stretching routine?"},
                            {"role": "assistant", "content": "Sure: calves, hamstrings, hips."}],
                           [{"role": "user", "content": "I attended a pottery workshop today, so much fun!",
                             "has_answer": True},
                            {"role": "assistant", "content": "That sounds lovely!"}]])
    [conv] = load_longmemeval(_write(tmp_path, [record]))
    [case] = conv.cases
    assert case.question_date == "2023/05/30 (Tue) 23:40"
    answers, graphs = {}, {}
    for label, asked in (("dated", case), ("undated", dataclasses.replace(case, question_date=None))):
        system = make_system("long_context")
        with dspy.context(lm=make_lm("sim")), trace(system) as tracer:
            system.ingest(conv)
            answers[label] = system.answer_case(asked).answer
            tracer.record_cases([asked])
        graphs[label] = tracer.graph
    assert answers["dated"] == "10 days"  # 20 May → 30 May
    assert answers["undated"] != answers["dated"]
    G = graphs["dated"]
    answer_op = next(n for n, d in G.nodes(data=True) if d.get("operation") == "answer")
    assert "2023/05/30 (Tue) 23:40" in G.nodes[answer_op]["inputs"]["context"]
    assert G.graph["cases"][0]["question_date"] == "2023/05/30 (Tue) 23:40"
    assert "question_date" not in graphs["undated"].graph["cases"][0]
