"""Tuned prompts a person would ship: edits instead of appends, the prompt check, knobs in every export."""

from __future__ import annotations

import difflib
import json
import subprocess
import sys
from pathlib import Path

import pytest

from memopt.data.model import Case, Conversation, Session, Turn
from memopt.export.check import PromptGuard, TrainingData, check_prompts
from memopt.simlm.directives import CATALOGUE
from memopt.simlm.edits import conflicts, edit, sentence_spans
from memopt.simlm.reflect import propose
from memopt.systems.prompts import SEED_PROMPTS

SEED = {op: (SEED_PROMPTS / "mem0" / f"{op}.md").read_text(encoding="utf-8") for op in ("extract", "update", "answer")}
OPERATION = {"extract": "mem0.extract: extracts the facts worth remembering from one session's turns",
             "update": "mem0.update: decides ADD, UPDATE, DELETE or NONE for new facts against similar memories",
             "answer": "mem0.answer: answers the question from the retrieved memories"}
EVERY_SPEAKER = "Record personal information for each speaker in the dialogue, not just the user."
DELETE_ONLY = ("Delete a memory only when the new fact explicitly retracts that same memory; never delete other "
               "memories about the person.")


def _pairs(kind: str, text: str) -> list[tuple[str, str]]:
    spans = [s.text for s in sentence_spans(text)]
    return [(a, b) for a in spans for b in spans if a != b and conflicts(kind, a, b)]


def _conversation(name_a: str = "Marisol", name_b: str = "Teodor") -> Conversation:
    turns = (Turn("D1:1", name_a, "My sister finally adopted a grey whippet from the shelter downtown.", 1),
             Turn("D1:2", name_b, "That is lovely news, I started pottery classes on Thursdays.", 1))
    case = Case("c1", "s1", "What kind of dog did Marisol's sister adopt from the shelter?", "a whippet", ("D1:1",), 1)
    return Conversation("s1", name_a, name_b, (Session(1, "8 May 2023", None, turns),), (case,))


# 1. edits, not appends
def test_a_new_rule_replaces_the_seed_sentences_it_contradicts_and_keeps_the_structure():
    done = edit(SEED["extract"], EVERY_SPEAKER, "extract")
    assert "SOLELY BASED ON THE USER'S MESSAGES" not in done.prompt
    assert "Create the facts based on the user messages only" not in done.prompt
    assert not _pairs("extract", done.prompt)
    assert _pairs("extract", SEED["extract"] + "\n" + EVERY_SPEAKER)  # the append main shipped contradicts itself
    for kept in ("Here are some few shot examples:", 'Facts: ["Name is John", "Is a Software engineer"]',
                 "7. Miscellaneous Information Management:", "- Do not return anything from the few shot examples"):
        assert kept in done.prompt
    changed = [line for line in difflib.unified_diff(SEED["extract"].splitlines(), done.prompt.splitlines(),
                                                     lineterm="", n=0) if line[:1] in "+-" and line[:3] not in "+++---"]
    assert len(changed) <= 8, changed
    assert done.change.startswith("replaced")


def test_a_restriction_the_seed_rule_does_not_have_rewrites_that_rule_in_place():
    done = edit(SEED["update"], DELETE_ONLY, "update")
    assert "then you have to delete it" not in done.prompt
    assert f"3. Delete: {DELETE_ONLY}" in done.prompt  # number and label kept
    assert "1. Add:" in done.prompt and "4. No Change:" in done.prompt
    assert not _pairs("update", done.prompt)


def test_a_rule_without_conflict_becomes_the_next_item_of_the_rule_list():
    rule = "If the context does not support an answer, reply exactly 'Not mentioned'."
    done = edit(SEED["answer"], rule, "answer")
    assert f"9. {rule}" in done.prompt.splitlines()
    assert done.prompt.replace(f"9. {rule}\n", "") == SEED["answer"]


@pytest.mark.parametrize("op", ["extract", "update", "answer"])
def test_simlm_proposals_on_the_mem0_seeds_never_keep_a_contradicting_sentence(op):
    feedback = "Several answers were wrong; the facts lost information. Only part of them."
    for seed in range(12):
        for proposal in propose({"operation": OPERATION[op], "current_instruction": SEED[op], "feedback": feedback,
                                 "n_candidates": 4}, seed)["proposals"]:
            assert not _pairs(op, proposal["prompt"]), proposal["changes"]
            assert "Only part of them." not in proposal["prompt"]  # a fragment of the feedback is not an instruction
            assert proposal["changes"]


def test_every_catalogue_phrasing_applied_to_each_seed_leaves_no_contradiction():
    for op in ("extract", "update", "answer"):
        for directive in CATALOGUE:
            if op in directive.operations:
                for phrasing in directive.phrasings:
                    assert not _pairs(op, edit(SEED[op], phrasing, op).prompt), (op, phrasing)


# 2. the check
def test_check_blocks_a_kept_contradiction_and_a_leaked_name_or_word_run():
    data = TrainingData.of([_conversation()])
    tuned = {"extract": SEED["extract"] + "\n" + EVERY_SPEAKER,
             "update": edit(SEED["update"], DELETE_ONLY, "update").prompt,
             "answer": SEED["answer"] + "\n9. Ask what Teodor would say.\n10. Prefer a grey whippet from the shelter "
                                        "downtown."}
    report = check_prompts("mem0", tuned, seed=SEED, data=data)
    kinds = {(i.op, i.kind) for i in report.blocking}
    assert ("extract", "contradiction") in kinds and ("answer", "leakage") in kinds
    assert not [i for i in report.issues if i.op == "update"]
    messages = " ".join(i.message for i in report.blocking)
    assert "Teodor" in messages and "grey whippet from the shelter downtown" in messages
    clean = check_prompts("mem0", {op: edit(SEED[op], EVERY_SPEAKER, "extract").prompt if op == "extract" else SEED[op]
                                   for op in SEED}, seed=SEED, data=data)
    assert not clean.blocking, clean.text()


def test_a_sentence_copied_from_the_feedback_with_a_gold_answer_item_is_leakage():
    # Seen in a LoCoMo run: the reflection copied an observation on a partial answer into the answer prompt, and
    # the round kept it ("Only Watching movies and left out making desserts."): no speaker name, no 6-word run.
    turns = (Turn("D1:1", "Joanna", "Besides writing, I also enjoy watching movies and making desserts.", 1),)
    case = Case("c1", "s1", "What kind of interests do Joanna and Nate share?", "Watching movies, making desserts",
                ("D1:1",), 1)
    other = Case("c2", "s1", "How long ago did Nate adopt the turtles?", "two weeks", ("D1:1",), 2)
    data = TrainingData.of([Conversation("s1", "Joanna", "Nate", (Session(1, "8 May 2023", None, turns),),
                                         (case, other))])
    feedback = ("Example 1:\nQuestion: What kind of interests do Joanna and Nate share?\nGold answer: Watching movies, "
                "making desserts\nObservation: The gold answer lists 2 items; the response gave only Watching movies "
                "and left out making desserts.\n")
    guard = PromptGuard("mem0", dict(SEED), data)
    leaky = [p["prompt"] for seed in range(8) for p in propose(
        {"operation": OPERATION["answer"], "current_instruction": SEED["answer"], "feedback": feedback,
         "n_candidates": 4}, seed)["proposals"] if "making desserts" in p["prompt"]]
    assert leaky  # SimLM, like a careless reflection LM, copies the observation in some proposals
    for prompt in leaky:
        blocked = guard.blocks("answer", prompt, feedback)
        assert [i.kind for i in blocked] == ["leakage"] and "'making desserts'" in blocked[0].message, blocked
    # A rule that merely shares words with a gold answer ("two weeks") and was not copied from the feedback stays.
    rule = edit(SEED["answer"], "Turn phrases like 'two weeks ago' into the date they mean.", "answer").prompt
    assert not guard.blocks("answer", rule, feedback)
    abstain = edit(SEED["answer"], "Reply 'Not mentioned' when nothing answers it.", "answer").prompt
    assert not guard.blocks("answer", abstain, "Gold answer: Not mentioned\n" + feedback)


def test_check_warns_on_fragments_and_growth_without_blocking():
    tuned = {"extract": SEED["extract"] + "\n- Only part of them.\n" + "- Use complete sentences.\n" * 200}
    report = check_prompts("mem0", tuned, seed={"extract": SEED["extract"]})
    assert {i.kind for i in report.issues} == {"fragment", "growth"} and not report.blocking
    assert "leakage" in report.text() and "not checked" in report.text()


def test_the_optimizer_never_tries_a_candidate_that_leaks_or_contradicts():
    from memopt.feedback.build import empty_feedback
    from memopt.optimize.propose import Proposal
    from memopt.optimize.reflective import ReflectiveOptimizer

    guard = PromptGuard("mem0", dict(SEED), TrainingData.of([_conversation()]))
    good = edit(SEED["extract"], EVERY_SPEAKER, "extract").prompt
    leaked = edit(SEED["extract"], "Record what Marisol says about her sister.", "extract").prompt
    kept = SEED["extract"] + "\n" + EVERY_SPEAKER
    optimizer = ReflectiveOptimizer(scorer=None, guard=guard)  # type: ignore[arg-type]
    candidates, rationales, rejected = optimizer._check(
        {"extract": [Proposal(leaked, "names"), Proposal(kept, "append"), Proposal(good, "every speaker")]},
        {"extract": empty_feedback("extract", None)})
    assert candidates == {"extract": [good]} and rationales[("extract", good)] == "every speaker"
    assert any("Marisol" in r for r in rejected) and any("contradiction" in r for r in rejected)


# 3. knobs in every export
def test_every_export_format_carries_the_knobs_run_id_and_scores(tmp_path):
    import dspy

    from memopt.export.formats import export
    from memopt.export.knobs import Knobs, load_knobs
    from memopt.systems import make_system

    knobs = Knobs({"top_k": 20, "similar_k": 5}, "abc123", {"val_f1": 0.61, "test_f1": 0.58}, "run")
    tuned = {**SEED, "extract": edit(SEED["extract"], EVERY_SPEAKER, "extract").prompt}
    text = export("mem0", tuned, "text", tmp_path / "text", knobs)
    loaded = load_knobs(text, "mem0")
    assert loaded.values == {"top_k": 20, "similar_k": 5} and loaded.run_id == "abc123"
    assert loaded.scores["test_f1"] == 0.58
    program = json.loads(export("mem0", tuned, "dspy", tmp_path / "p.json", knobs).read_text())
    assert program["memopt"]["knobs"]["top_k"] == 20 and program["memopt"]["run_id"] == "abc123"
    system = make_system("mem0")
    system.load(str(tmp_path / "p.json"))  # DSPy still loads it
    assert system.instructions()["extract"].strip() == tuned["extract"].strip()
    assert isinstance(system, dspy.Module)
    config = json.loads(export("mem0", tuned, "mem0", tmp_path / "m.json", knobs).read_text())
    assert config["memopt"]["search"] == {"limit": 20} and config["memopt"]["scores"]["val_f1"] == 0.61
    assert config["memopt"]["knobs"] == {"top_k": 20, "similar_k": 5}


def test_a_prompts_directory_without_knobs_exports_the_pipeline_defaults(tmp_path):
    from memopt.export.knobs import load_knobs
    from memopt.systems import system_class
    from memopt.systems.prompts import write_prompts

    write_prompts("mem0", SEED, tmp_path)
    found = load_knobs(tmp_path, "mem0")
    assert found.values == dict(system_class("mem0").defaults) and found.source == "defaults"


def test_a_knobs_file_with_a_key_written_twice_is_refused(tmp_path):
    from memopt.core.errors import ConfigError
    from memopt.export.knobs import load_knobs

    (tmp_path / "mem0").mkdir()
    (tmp_path / "mem0" / "knobs.yaml").write_text("knobs:\n  top_k: 20\n  similar_k: 5\n  top_k: 5\n")
    with pytest.raises(ConfigError, match=r"knobs.yaml: not a knobs file \(the key 'top_k' is written twice"):
        load_knobs(tmp_path, "mem0")


# 4. the rationale is the prompt version's commit message
@pytest.mark.slow  # a real MLflow store: over 4 s
def test_rationales_become_per_prompt_commit_messages(tmp_path):
    import mlflow

    from memopt.optimize.loop import _commit_messages
    from memopt.optimize.reflective import RoundOutcome
    from memopt.optimize.scoring import Scored
    from memopt.optimize.select import Choice
    from memopt.optimize.state import RoundRecord
    from memopt.tracking import Tracker

    outcome = RoundOutcome(Scored([], {}, {}), [], {}, {}, Choice({}, {}, 0.0, 0), True,
                           rationales={"extract": "replaced the user-only rule with every speaker (all_participants)"})
    record = RoundRecord(round=1, train=None, val={"f1": 0.4}, test=None)
    record.changed_ops = ["extract"]
    messages = _commit_messages(record, outcome, 0.2, outcome.rationales)
    assert set(messages) == {"extract"}
    assert messages["extract"].endswith("replaced the user-only rule with every speaker (all_participants)")
    uri = f"sqlite:///{tmp_path}/mlflow.db"
    tracker = Tracker(uri, "memopt-test")
    tracker.start("t", {})
    with tracker.round(1) as log:
        log.register_prompts("mem0", {"extract": "Extract the facts of every speaker."}, commit_message=messages,
                             round_index=1)
        log.end()
    tracker.finish()
    version = mlflow.MlflowClient(uri).load_prompt("prompts:/memopt-test.mem0.extract@latest")  # experiment-scoped
    assert version.commit_message == messages["extract"]


@pytest.mark.slow  # a subprocess: over 4 s
def test_cli_check_prompts_exits_1_on_a_blocking_issue(tmp_path):
    from memopt.systems.prompts import write_prompts

    write_prompts("mem0", {**SEED, "extract": SEED["extract"] + "\n" + EVERY_SPEAKER}, tmp_path / "tuned")
    done = subprocess.run([sys.executable, "-m", "memopt", "check-prompts", str(tmp_path / "tuned")],
                          capture_output=True, text=True, timeout=120, cwd=Path(__file__).resolve().parents[2])
    assert done.returncode == 1, done.stderr
    assert "BLOCK extract contradiction" in done.stdout and "Traceback" not in done.stderr


def test_a_non_utf8_seed_prompt_is_one_error_naming_the_option_and_the_file(tmp_path):
    from memopt.core.errors import DataError
    from memopt.systems.prompts import write_prompts
    from memopt.tracking.sources import check_source

    write_prompts("mem0", SEED, tmp_path / "tuned")
    write_prompts("mem0", SEED, tmp_path / "seed")
    (tmp_path / "seed" / "mem0" / "answer.md").write_bytes(b"\xaf\xff\xfe binary \x80\x81")
    with pytest.raises(DataError, match=r"^--seed-prompts: .*answer\.md: not UTF-8 text"):
        check_source(str(tmp_path / "tuned"), seed_dir=str(tmp_path / "seed"))
    from memopt.core.errors import ConfigError

    with pytest.raises(ConfigError, match=r"^--seed-prompts .*sed: no such directory"):  # a typo is not "no seed"
        check_source(str(tmp_path / "tuned"), seed_dir=str(tmp_path / "sed"))


@pytest.mark.slow  # subprocesses: over 4 s
def test_cli_export_and_check_prompts_refuse_a_non_utf8_seed_prompt(tmp_path):
    from memopt.systems.prompts import write_prompts

    write_prompts("mem0", SEED, tmp_path / "tuned")
    write_prompts("mem0", SEED, tmp_path / "seed")
    (tmp_path / "seed" / "mem0" / "answer.md").write_bytes(b"\xaf\xff\xfe binary \x80\x81")
    for args in (("export", "tuned", "-f", "mem0", "-o", "x1.json"), ("check-prompts", "tuned")):
        done = subprocess.run([sys.executable, "-m", "memopt", *args, "--seed-prompts", "seed"],
                              capture_output=True, text=True, timeout=120, cwd=tmp_path)
        assert done.returncode == 2, (args, done.stderr)
        assert "error: --seed-prompts: " in done.stderr and "not UTF-8 text" in done.stderr, done.stderr
        assert "Traceback" not in done.stderr, done.stderr
    assert not (tmp_path / "x1.json").exists()


def test_a_real_lm_proposal_that_only_appends_is_turned_into_edits():
    from memopt.optimize.propose import as_edit

    appended = SEED["update"].strip() + "\n" + DELETE_ONLY
    text, changes = as_edit(SEED["update"], appended, OPERATION["update"])
    assert "then you have to delete it" not in text and DELETE_ONLY in text and changes
    assert not _pairs("update", text)
    rewritten = SEED["update"].replace("four operations", "4 operations")
    assert as_edit(SEED["update"], rewritten, OPERATION["update"]) == (rewritten, [])
