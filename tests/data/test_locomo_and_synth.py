"""LoCoMo loading, malformed-input errors, the synthetic generator, splits."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter

import pytest

from memopt.core.errors import DataError
from memopt.data import NOT_MENTIONED, load_locomo, parse_locomo
from memopt.data.synth import SynthSpec, generate, generate_with_kinds, synthetic_conversations, write_synthetic


def test_load_locomo_dev(locomo_dev):
    conversations = load_locomo(locomo_dev)
    assert [c.sample_id for c in conversations] == ["conv-26", "conv-30", "conv-41", "conv-42", "conv-43"]
    assert sum(len(c.cases) for c in conversations) == 999
    conv = conversations[1]
    assert (conv.speaker_a, conv.speaker_b) == ("Jon", "Gina")
    assert conv.sessions[0].date is not None and conv.sessions[0].date.isoformat() == "2023-01-20"
    case = conv.cases[0]
    assert case.case_id == "conv-30:q0" and case.category == 2 and case.evidence == ("D1:2",)
    adversarial = [c for c in conv.cases if c.category == 5]
    assert adversarial and all(c.gold == NOT_MENTIONED for c in adversarial)
    assert all(c.adversarial_answer for c in adversarial)
    assert conv.turn("D1:2").speaker == "Jon"


def test_shared_data_is_found_through_a_symlinked_checkout(tmp_path):
    from tests.conftest import LOCOMO_DEV_IN_SHARED, find_locomo_dev, require_locomo_dev, shared_candidates

    data = tmp_path / "ci" / "shared" / LOCOMO_DEV_IN_SHARED
    data.parent.mkdir(parents=True)
    data.write_text("[]")
    clone = tmp_path / "store" / "clone"
    (clone / "tests").mkdir(parents=True)
    (tmp_path / "ci" / "memopt").symlink_to(clone, target_is_directory=True)
    logical = tmp_path / "ci" / "memopt"
    # The old rule (this file's resolved path, three levels up) misses it: the physical parent has no shared/.
    assert find_locomo_dev([(clone / "tests" / "conftest.py").resolve().parent.parent.parent / "shared"]) is None
    by_pwd = shared_candidates(clone / "tests" / "conftest.py", cwd=clone, env={"PWD": str(logical)})
    assert find_locomo_dev(by_pwd) == logical.parent / "shared" / LOCOMO_DEV_IN_SHARED
    by_path = shared_candidates(logical / "tests" / "conftest.py", cwd=clone, env={})
    assert find_locomo_dev(by_path) is not None
    by_env = shared_candidates(clone / "tests" / "conftest.py", cwd=clone, env={"MEMOPT_SHARED": str(data.parents[2])})
    assert find_locomo_dev(by_env) == data
    nowhere = shared_candidates(clone / "tests" / "conftest.py", cwd=clone, env={})
    with pytest.raises(pytest.fail.Exception, match="CI must run the LoCoMo tests.*looked at .*store"):
        require_locomo_dev(nowhere, env={"CI": "true"})
    with pytest.raises(pytest.skip.Exception, match="set MEMOPT_SHARED"):
        require_locomo_dev(nowhere, env={})


def test_a_relative_data_path_is_read_as_the_shell_names_it(tmp_path, monkeypatch):
    from memopt.data.source import data_path, load_data

    shared = tmp_path / "ci" / "shared"
    shared.mkdir(parents=True)
    write_synthetic(SynthSpec(conversations=1, sessions=2), shared / "dev.json")
    clone = tmp_path / "store" / "clone"
    clone.mkdir(parents=True)
    (tmp_path / "ci" / "memopt").symlink_to(clone, target_is_directory=True)
    monkeypatch.chdir(clone)  # the kernel's ../ from here is tmp/store, which has no shared/
    monkeypatch.setenv("PWD", str(tmp_path / "ci" / "memopt"))
    assert data_path("../shared/dev.json") == shared / "dev.json"
    assert len(load_data("../shared/dev.json")[1]) == 1
    monkeypatch.delenv("PWD")
    with pytest.raises(DataError, match="no such data file"):
        load_data("../shared/dev.json")


def test_load_single_sample_object(locomo_dev, tmp_path):
    one = json.loads(locomo_dev.read_text())[1]
    path = tmp_path / "one.json"
    path.write_text(json.dumps(one))
    [conv] = load_locomo(path)
    assert conv.sample_id == "conv-30"


@pytest.mark.parametrize(
    ("mutate", "where"),
    [
        (lambda d: d[0]["conversation"].pop("speaker_a"), "[0].conversation.speaker_a"),
        (lambda d: d[0]["conversation"]["session_1"][2].pop("text"), "[0].conversation.session_1[2].text"),
        (lambda d: d[0]["qa"][3].update(category="two"), "[0].qa[3].category"),
        (lambda d: d[0]["qa"][0].pop("answer"), "[0].qa[0].answer"),
        (lambda d: d[0]["conversation"].pop("session_1_date_time"), "[0].conversation.session_1_date_time"),
    ],
)
def test_malformed_input_names_file_and_json_path(tmp_path, mutate, where):
    data = generate(SynthSpec(conversations=1, sessions=2))
    mutate(data)
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(data))
    with pytest.raises(DataError) as err:
        load_locomo(path)
    assert str(path) in str(err.value) and where in str(err.value)


def test_unreadable_files_give_one_clear_error(tmp_path):
    with pytest.raises(DataError, match="no such data file"):
        load_locomo(tmp_path / "missing.json")
    broken = tmp_path / "broken.json"
    broken.write_text('[{"sample_id": "x",')
    with pytest.raises(DataError, match=r"broken.json: not valid JSON \(line 1"):
        load_locomo(broken)


def test_synth_is_byte_identical_for_a_seed_and_differs_across_seeds(tmp_path):
    a, b, c = tmp_path / "a.json", tmp_path / "b.json", tmp_path / "c.json"
    write_synthetic(SynthSpec(conversations=3, sessions=5, seed=7), a)
    write_synthetic(SynthSpec(conversations=3, sessions=5, seed=7), b)
    write_synthetic(SynthSpec(conversations=3, sessions=5, seed=8), c)
    assert a.read_bytes() == b.read_bytes()
    assert a.read_bytes() != c.read_bytes()


def test_synth_has_all_categories_and_valid_evidence():
    conversations = synthetic_conversations(SynthSpec(conversations=4, sessions=8, seed=3))
    categories = Counter(case.category for conv in conversations for case in conv.cases)
    assert set(categories) == {1, 2, 3, 4, 5}
    for conv in conversations:
        ids = {t.dia_id for t in conv.turns}
        assert len(conv.sessions) == 8 and {t.speaker for t in conv.turns} == {conv.speaker_a, conv.speaker_b}
        for case in conv.cases:
            assert case.evidence and set(case.evidence) <= ids, case
            if case.category == 5:
                assert case.gold == NOT_MENTIONED
            elif case.category == 4:
                evidence_text = " ".join(conv.turn(e).text for e in case.evidence)
                assert case.gold.lower() in evidence_text.lower(), case  # single-hop answers are stated


def test_synth_mixes_in_a_documented_share_of_hard_questions_with_correct_golds():
    from memopt.data.synth_hard import KINDS

    spec = SynthSpec(conversations=4, sessions=8, seed=3)
    samples, kinds = generate_with_kinds(spec)
    conversations = parse_locomo(samples)
    for conv in conversations:
        cases = [c for c in conv.cases if c.case_id in kinds]
        assert len(cases) == round(0.2 * len(conv.cases)), conv.sample_id  # hard_percent=20 of each conversation
        for case in cases:
            evidence = " ".join(conv.turn(e).text for e in case.evidence)
            if case.category != 2:  # the gold is stated in the evidence (a date gold is resolved from it)
                assert case.gold.lower() in evidence.lower(), case
    assert set(kinds.values()) == set(KINDS)
    assert {c.category for conv in conversations for c in conv.cases if c.case_id in kinds} == {1, 2, 3, 4}
    plain, none = generate_with_kinds(SynthSpec(conversations=4, sessions=8, seed=3, hard_percent=0))
    assert none == {}
    regular_turns = {t["text"] for s in plain for k, v in s["conversation"].items() if isinstance(v, list) for t in v}
    hard_turns = {t["text"] for s in samples for k, v in s["conversation"].items() if isinstance(v, list) for t in v}
    assert regular_turns <= hard_turns  # the stories are told beside the regular events, which stay as they were
    with pytest.raises(DataError, match=r"^synthetic spec synthetic:conversations=6,sessions=8,seed=0,"
                                         r"hard_percent=95: hard_percent=95; it must be between 0 and 90"):
        SynthSpec(hard_percent=95)
    with pytest.raises(DataError, match=r"sessions=0,seed=0,questions_per_conversation=0: sessions=0, "
                                         r"questions_per_conversation=0; .* must be at least 1"):
        SynthSpec(sessions=0, questions_per_conversation=0)
    assert SynthSpec(hard_percent=0).describe().endswith(",hard_percent=0")


def test_synth_tells_relative_dates_updates_and_retractions():
    text = " ".join(t.text for conv in synthetic_conversations(SynthSpec(conversations=6, sessions=10))
                    for t in conv.turns)
    assert "yesterday" in text or "last week" in text
    assert "no longer" in text or "quit" in text
    assert "moved from" in text or "left" in text


@pytest.mark.slow  # over 4 s (CI runs it with -m slow)
def test_synth_scales_linearly_to_thousands_of_sessions():
    [conv] = synthetic_conversations(SynthSpec(conversations=1, sessions=2000, seed=1))
    assert len(conv.sessions) == 2000 and len(conv.turns) > 15000


def test_data_synth_cli(tmp_path):
    out = tmp_path / "synth.json"
    cmd = [sys.executable, "-m", "memopt", "data", "synth", "--conversations", "2", "--sessions", "3",
           "--hard-percent", "25", "--out", str(out)]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "2 conversations" in done.stdout and "no directive fixes" in done.stdout
    assert len(parse_locomo(json.loads(out.read_text()))) == 2


def test_splits_are_by_conversation_seeded_and_complete():
    from memopt.data.splits import split_ids

    ids = [f"c{i}" for i in range(10)]
    split = split_ids(ids, seed=1)
    assert split == split_ids(ids, seed=1) and split != split_ids(ids, seed=2)
    assert sorted(split.train + split.val + split.test) == sorted(ids)
    assert split.sizes() == (6, 2, 2)
    assert all(n >= 1 for n in split_ids(["a", "b", "c"], seed=0).sizes())


def test_data_specs():
    from memopt.data.source import load_data, parse_synth_spec, select

    assert parse_synth_spec("synthetic") == SynthSpec()
    assert parse_synth_spec("synthetic:conversations=2,seed=4") == SynthSpec(conversations=2, seed=4)
    assert parse_synth_spec("synthetic:hard_percent=0") == SynthSpec(hard_percent=0)
    assert parse_synth_spec("data/x.json") is None
    with pytest.raises(DataError, match="bad option 'sessoins=3'"):
        parse_synth_spec("synthetic:sessoins=3")
    name, conversations = load_data("synthetic:conversations=2,sessions=2")
    assert name == "synthetic:conversations=2,sessions=2,seed=0" and len(conversations) == 2
    with pytest.raises(DataError, match="unknown conversation id"):
        select(conversations, ["nope"])
