"""SimLM reads the real Mem0's two calls (captured from mem0ai 1.0.11) and answers them with bare JSON."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memopt.core.text import find_relative_dates, parse_session_date
from memopt.export.formats import mem0_fragment
from memopt.simlm import SimLM
from memopt.simlm.directives import active_directives
from memopt.simlm.mem0_formats import FACTS_MARKER, read_request
from memopt.systems.prompts import load_prompts
from tests.conftest import InFlight

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
# Captured by running mem0ai 1.0.11 (Memory.add, session 2 and 3 of synth-1-000) with prompts exported from
# a quickstart optimize run; the update prompt is the text before Mem0's fixed part.
EXTRACT = json.loads((FIXTURES / "mem0_extract_request.json").read_text())
UPDATE = json.loads((FIXTURES / "mem0_update_request.json").read_text())
SEED = mem0_fragment("mem0", load_prompts("mem0", ["extract", "update", "answer"])).config


def _extract(system: str, user: str = EXTRACT["messages"][1]["content"]) -> list[str]:
    reply = json.loads(SimLM().respond(system, user))
    assert set(reply) == {"facts"}, reply
    return reply["facts"]


def _update(text: str) -> list[dict]:
    reply = json.loads(SimLM().respond("", text))
    assert set(reply) == {"memory"}, reply
    return reply["memory"]


def test_captured_requests_have_mem0s_shape():
    system, user = (m["content"] for m in EXTRACT["messages"])
    assert [m["role"] for m in EXTRACT["messages"]] == ["system", "user"]
    assert user.startswith("Input:\nuser: Alex: ") and system.endswith("Today's date is 14 July 2023.")
    assert [m["role"] for m in UPDATE["messages"]] == ["user"]
    assert FACTS_MARKER in UPDATE["messages"][0]["content"]
    assert EXTRACT["response_format"] == UPDATE["response_format"] == {"type": "json_object"}


def test_tuned_extraction_keeps_both_speakers_and_resolves_dates_from_the_prompt():
    facts = _extract(EXTRACT["messages"][0]["content"])
    assert any(f.startswith("Sami switched jobs on 12 July 2023") for f in facts), facts
    assert any(f.startswith("Alex also got a parrot the Monday before 14 July 2023") and "Bean" in f for f in facts)
    assert not any(find_relative_dates(f) for f in facts)
    iso = _extract(EXTRACT["messages"][0]["content"].replace("14 July 2023", "2023-07-14"))
    assert iso == facts, "an ISO date (Mem0's default prompts) is read the same way"


def test_seed_extraction_shows_the_seed_failures():
    facts = _extract(SEED["custom_fact_extraction_prompt"].replace("{session_date}", "14 July 2023"))
    assert facts == ["Alex also got a parrot last Monday"], "first speaker only, relative date, first clause"


def test_without_a_date_relative_dates_stay_relative():
    tuned = EXTRACT["messages"][0]["content"]
    facts = _extract(tuned.replace("Today's date is 14 July 2023.", "Today's date is {session_date}."))
    assert any("two days ago" in f for f in facts), facts


def test_extraction_speakers_from_content_else_from_the_role():
    request = read_request("Extract facts.", "Input:\nuser: I moved to Paris last week.\nassistant: Bob: I adopted "
                                              "a cat named Tom\nand I love him.\nsystem: ignore me\n")
    assert request is not None and request.operation == "extract"
    assert request.inputs["conversation"] == ("User: I moved to Paris last week.\n"
                                              "Bob: I adopted a cat named Tom and I love him.")
    assert request.inputs["session_date"] == ""


def test_update_directives_come_from_the_custom_prompt_only():
    text = UPDATE["messages"][0]["content"]
    tuned = read_request("", text)
    assert tuned is not None and tuned.operation == "update"
    assert text.startswith(tuned.instructions) and "JSON structure" not in tuned.instructions
    assert active_directives("update", tuned.instructions) == {"update_on_contradiction", "delete_only_explicit"}
    seed = read_request("", SEED["custom_update_memory_prompt"] + text[len(tuned.instructions):])
    assert seed.instructions == SEED["custom_update_memory_prompt"]
    assert active_directives("update", seed.instructions) == frozenset()
    assert len(json.loads(tuned.inputs["existing_memories"])) == 4 and len(json.loads(tuned.inputs["new_facts"])) == 3


def test_captured_update_is_decided_in_mem0s_schema():
    events = {e["id"]: e for e in _update(UPDATE["messages"][0]["content"])}
    assert set(events) == {"0", "1", "2", "3", "4", "5"}
    assert events["0"]["event"] == "UPDATE" and "Orbitly" in events["0"]["text"]
    assert "Kestrel Labs" in events["0"]["old_memory"]
    assert {events[i]["event"] for i in ("1", "2", "3")} == {"NONE"}
    assert events["4"]["event"] == events["5"]["event"] == "ADD"
    assert all(set(e) == {"id", "text", "event", "old_memory"} and e["text"] for e in events.values())


def test_compatible_fact_is_added_by_the_tuned_prompt_and_overwrites_with_the_seed_prompt():
    text = UPDATE["messages"][0]["content"]
    facts_block = text[text.index("['Sami switched"):text.index("]", text.index("['Sami switched")) + 1]
    compatible = text.replace(facts_block, repr(["Sami also teaches design classes at Kestrel Labs"]))
    tuned = {e["event"] for e in _update(compatible) if "teaches" in e["text"]}
    prompt = read_request("", compatible).instructions
    seed = _update(SEED["custom_update_memory_prompt"] + compatible[len(prompt):])
    assert tuned == {"ADD"}
    assert [e["event"] for e in seed if "teaches" in e["text"]] == ["UPDATE"]


@pytest.mark.parametrize("block", ["__import__('os').system('echo pwned')", "[1, 2", "{'id': '0'}"])
def test_unreadable_lists_count_as_empty_and_are_never_executed(block, capfd):
    text = UPDATE["messages"][0]["content"]
    start = text.index("['Sami switched")
    broken = text[:start] + block + text[text.index("]", start) + 1:]
    assert _update(broken) == [{"id": str(i), "text": json.loads(read_request("", text).inputs["existing_memories"])[i]
                                ["text"], "event": "NONE", "old_memory": None} for i in range(4)]
    assert "pwned" not in capfd.readouterr().out


def test_other_prompts_are_not_mem0_calls():
    assert read_request("You are helpful.", "What is 2 + 2?") is None
    assert read_request("", "Input:\n") is None
    assert SimLM().respond("You are helpful.", "What is 2 + 2?").startswith("SimLM (simulated)")


def test_parse_session_date_reads_iso_and_locomo_dates():
    assert parse_session_date("2023-07-14") == parse_session_date("14 July 2023") == parse_session_date(
        "1:31 am on 14 July, 2023")
    assert parse_session_date("Today's date is 2023-07-14.").isoformat() == "2023-07-14"
    assert parse_session_date("2023-13-40") is None and parse_session_date("{session_date}") is None


# Captured by running mem0ai 2.2.1 (Memory.add, session 2 of synth-2-000, custom_instructions set by the caller):
# one ADD-only extraction call, Mem0's fixed system prompt, the "## ..." sections of its user prompt.
ADDITIVE = json.loads((FIXTURES / "mem0v2_extract_request.json").read_text())


def _additive(user: str) -> list[dict]:
    system = ADDITIVE["messages"][0]["content"]
    reply = json.loads(SimLM().respond(system, user))
    assert set(reply) == {"memory"}, reply
    return reply["memory"]


def test_mem0_2x_extraction_is_answered_from_the_new_messages_in_its_schema():
    user = ADDITIVE["messages"][1]["content"]
    request = read_request(ADDITIVE["messages"][0]["content"], user)
    assert (request.operation, request.output, request.reply) == ("extract", "facts", "additive")
    items = _additive(user)
    assert [m["id"] for m in items] == [str(i) for i in range(len(items))]
    assert all(set(m) == {"id", "text", "attributed_to"} for m in items)
    texts = " ".join(m["text"] for m in items)
    assert "Colosseum" in texts and "tennis" in texts, "facts of both speakers' new messages"
    assert "Subaru" not in texts and "Mosaic" not in texts, "the earlier messages and existing memories are context"
    italy = next(m["text"] for m in items if "Italy" in m["text"])
    assert "May 2023" in italy and "this month" not in italy, "dated by the custom instructions' date line"


def test_mem0_2x_without_a_date_line_uses_the_observation_date():
    user = ADDITIVE["messages"][1]["content"].replace("Today's date is 2 May 2023.", "")
    observed = user.split("## Observation Date\n", 1)[1].split("\n", 1)[0]
    italy = next(m["text"] for m in _additive(user) if "Italy" in m["text"])
    assert "May 2023" not in italy and str(parse_session_date(observed).year) in italy


def test_mem0_2x_directives_come_from_its_prompt_and_the_custom_instructions():
    system, user = (m["content"] for m in ADDITIVE["messages"])
    bare = user.replace("Extract the facts of both speakers. Resolve relative dates.\n", "")
    assert active_directives("extract", read_request("", bare).instructions) == frozenset()
    assert active_directives("extract", read_request("", user).instructions) == {"all_participants", "resolve_dates"}
    assert active_directives("extract", read_request(system, bare).instructions) >= {"all_participants",
                                                                                     "resolve_dates", "keep_details"}


def test_literal_reads_take_turns_across_threads(monkeypatch):
    # CPython 3.11 shares the AST builder's recursion depth between threads (a SystemError seen in CI), so every
    # read of a Python literal in memopt goes through one lock, and no other module parses Python by itself.
    import ast
    import time

    import memopt.core.text
    from memopt.core.parallel import map_ordered

    in_flight, real = InFlight(), ast.literal_eval

    def counted(text):
        with in_flight:
            time.sleep(0.01)
            return real(text)

    monkeypatch.setattr(ast, "literal_eval", counted)
    assert map_ordered(memopt.core.text.python_literal, [f"[{i}, 'x']" for i in range(16)], workers=8) == \
        [[i, "x"] for i in range(16)]
    assert in_flight.peak == 1
    root = Path(memopt.core.text.__file__).parents[1]
    parsers = [p.relative_to(root).as_posix() for p in root.rglob("*.py")
               if p.name != "text.py" and ("ast.literal_eval(" in p.read_text() or "ast.parse(" in p.read_text())]
    assert parsers == []
