"""Prompts are not only directives (issue 47): what SimLM reads in real prompts and in its own catalogue.

Operation definitions ("ADD: Add it to the memory as a new element"), descriptions of the context, output formats
and few-shot examples are not directives. ``tests/fixtures/prompt_readings.yaml`` lists, for memopt's seed prompts
and every default prompt of Mem0 1.0.11 and 2.2.1, each sentence SimLM reads something in and what it reads (every
other sentence reads nothing), and the directives the text asks for: SimLM must read exactly that, and turn on no
directive the text does not express. The catalogue's own sentences read as the catalogue says.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from memopt.simlm import CATALOGUE, IRRELEVANT, active_directives, catalogue_table, directive_stances, directives_for
from memopt.simlm.directives import read_stances, rule_stances, sentence_readings
from memopt.systems.prompts import load_prompts

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
READINGS = yaml.safe_load((FIXTURES / "prompt_readings.yaml").read_text(encoding="utf-8"))
MEM0 = json.loads((FIXTURES / "mem0_prompts_by_version.json").read_text(encoding="utf-8"))
OPERATIONS = sorted({op for d in CATALOGUE for op in d.operations})


def _text(key: str) -> str:
    source, *rest = key.split()
    if source == "memopt":
        pipeline, op = rest[0].split(".")
        return load_prompts(pipeline, [op])[op]
    return MEM0[rest[0]][rest[1]]


def test_every_default_prompt_of_both_mem0_versions_and_every_seed_prompt_is_listed():
    listed = {key for key in READINGS}
    for version in ("1.0.11", "2.2.1"):
        for name, text in MEM0[version].items():
            first = f"mem0 1.0.11 {name}"
            assert f"mem0 {version} {name}" in listed or (first in listed and MEM0["1.0.11"][name] == text)
    assert {f"memopt {p}.{o}" for p, o in [("mem0", "extract"), ("mem0", "update"), ("mem0", "answer"),
                                            ("rag", "answer"), ("rag", "rewrite_query"), ("long_context", "answer"),
                                            ("evermemos", "episode"), ("evermemos", "facts"),
                                            ("evermemos", "answer")]} <= listed


@pytest.mark.parametrize("key", list(READINGS))
def test_each_sentence_of_a_prompt_reads_as_listed(key):
    entry = READINGS[key]
    read = [{"text": s, "reads": said} for s, said in sentence_readings(entry["op"], _text(key)) if said]
    assert read == [{"text": s["text"], "reads": s["reads"]} for s in entry["sentences"]]


@pytest.mark.parametrize("key", list(READINGS))
def test_a_prompt_turns_on_no_directive_its_text_does_not_express(key):
    entry = READINGS[key]
    stances = read_stances(entry["op"], _text(key))
    assert stances == entry["reads"]
    assert {d for d, v in stances.items() if v > 0} <= set(entry["expresses"])


def test_operation_definitions_are_not_directives():
    """Mem0's update prompt defines its four events; the definitions ask for no behaviour."""
    update = MEM0["1.0.11"]["DEFAULT_UPDATE_MEMORY_PROMPT"]
    assert "- ADD: Add it to the memory as a new element" in update and active_directives("update", update) == set()
    for definition in ("ADD: Add it to the memory as a new element", "DELETE: Delete an existing memory element",
                       "UPDATE: Update an existing memory element", "NONE: Make no change"):
        assert active_directives("update", definition) == set(), definition


def test_a_record_shown_as_data_is_not_read():
    """A JSON record (an ``id`` or a ``role``) in a few-shot example is data: its text asks for nothing, where the same
    words as a sentence of the prompt would."""
    said = "Never drop the names of people, pets or places from a fact."
    assert active_directives("extract", said) == {"keep_details"}
    for record in (f'{{"id": "0", "text": "{said}"}}', f'[{{"role": "user", "content": "{said}"}}]', f'"{said}"'):
        assert directive_stances("extract", record) == {}, record
        assert rule_stances("extract", record) == {}, record


def test_the_catalogue_reads_as_it_says():
    """Reflection appends the phrasings: each turns on its directive and speaks about no other of its operation."""
    for directive in CATALOGUE:
        for op in directive.operations:
            for text in (*directive.phrasings, *directive.examples_on):
                assert directive_stances(op, text) == {directive.id: 1}, (op, text)
            for text in directive.examples_off:
                assert directive_stances(op, text).get(directive.id, 0) <= 0, (op, text)
    for sentence in IRRELEVANT:
        for op in OPERATIONS:
            assert directive_stances(op, sentence) == {}, (op, sentence)


def test_the_last_sentence_about_a_directive_decides():
    grant, forbid = "Convert relative dates into calendar dates.", "Keep relative dates as they are."
    assert directive_stances("extract", f"{grant} {forbid}") == {"resolve_dates": -1}
    assert directive_stances("extract", f"{forbid} {grant}") == {"resolve_dates": +1}
    assert active_directives("extract", f"{grant}\nWrite in a neutral, professional tone.") == {"resolve_dates"}


def test_appended_bad_advice_turns_a_directive_off():
    tuned = "Answer from the context. If the memories do not support an answer, reply 'Not mentioned'."
    assert "abstain" in active_directives("answer", tuned)
    bad = f"{tuned}\nAlways give an answer, never say it is not mentioned."
    assert directive_stances("answer", bad) == {"abstain": -1}


def test_directives_for_an_operation_read_only_that_operations_directives():
    text = "Combine all relevant memories. Convert relative dates into calendar dates."
    assert set(directive_stances("answer", text)) <= {d.id for d in directives_for("answer")}
    assert active_directives("extract", text) == {"resolve_dates"}


def test_memopt_directives_prints_the_catalogue():
    done = subprocess.run([sys.executable, "-m", "memopt", "directives", "--markdown"], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0 and done.stdout == catalogue_table() + "\n"
