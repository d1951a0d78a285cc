"""SimLM reads the same feedback examples in any format: prose, Q/A labels, JSON, Markdown tables, bullets,
YAML-ish blocks and other languages' punctuation (fixtures: tests/feedback_formats.py); a speaker named like a
label stays a speaker where the context says so; the format controls of the feedback bench."""

from __future__ import annotations

import pytest

from memopt.feedback.formats import FORMATS, parts_of, render, restyle
from memopt.feedback.kinds import get_kind, kind_names
from memopt.simlm.examples import read_feedback
from memopt.simlm.reflect import read_evidence
from tests.feedback_formats import CASES, HELD_OUT, KIND, fields_recovered, native, renderings, strength


def test_native_rendering_is_read_whole():
    """The reference: memopt's own format gives every field and full strength on these cases."""
    found = read_feedback(native(CASES)).examples
    assert len(found) == len(CASES)
    for case, ex in zip(CASES, found, strict=True):
        fields = fields_recovered(case, ex)
        assert all(v for k, v in fields.items() if k != "operation"), (case.question, fields)
    assert strength(CASES, native) == 1.0


@pytest.mark.parametrize("fmt", FORMATS)
def test_every_format_gives_the_same_examples_fields_and_evidence_as_the_native_one(fmt):
    text = renderings(CASES, "tuned")[fmt]
    found = read_feedback(text).examples
    assert len(found) == len(CASES), text
    for case, ex in zip(CASES, found, strict=True):
        fields = fields_recovered(case, ex)
        assert all(fields.values()), (fmt, case.question, fields, ex)
    assert strength(CASES, lambda cs: render(cs, fmt)) == strength(CASES, native)
    for kind in sorted(set(KIND.values())):  # the same losses, so the same fixes
        mine = [c for c in CASES if KIND[c.operation] == kind]
        assert set(read_evidence(kind, render(mine, fmt)).weights) == set(read_evidence(kind, native(mine)).weights)


@pytest.mark.parametrize("label", ["Q", "Asked", "Question -", "Query", "Q.", "Question：", "Question :"])
def test_a_question_label_is_not_taken_for_a_speaker(label):
    sep = "" if label[-1] in "-：:" else ":"
    text = (f"{label}{sep} When did Zane go to Greece?\nExpected: 1 December 2022\nGot: yesterday\n"
            "Evidence: Zane: I went to Greece yesterday, the highlight was the Acropolis.")
    [ex] = read_feedback(text).examples
    assert ex.question == "When did Zane go to Greece?"
    assert (ex.gold, ex.answer) == ("1 December 2022", "yesterday")
    assert ex.turns == [("Zane", "I went to Greece yesterday, the highlight was the Acropolis.")]


def test_a_speaker_named_like_a_label_stays_a_speaker_where_the_context_says_so():
    text = ("Q: When did Asked move to Paris?\nA: 3 May 2023\nGot: last week\n"
            "Evidence: Asked: I moved to Paris last week.\n> Q: I adopted a cat named Olive.\n"
            "Conversation:\n  Q: Where did you go last weekend, Asked?\n  Zane: Greece, the Acropolis was lovely.")
    [ex] = read_feedback(text).examples
    assert ex.question == "When did Asked move to Paris?" and ex.gold == "3 May 2023"
    assert ex.turns == [("Asked", "I moved to Paris last week."), ("Q", "I adopted a cat named Olive."),
                        ("Q", "Where did you go last weekend, Asked?"), ("Zane", "Greece, the Acropolis was lovely.")]


def test_prose_keeps_the_source_turns_attributed_without_first_person():
    text = ('For "What does Kira\'s landlord do?" the reference answer is "dentist" while the model answered "met '
            'Ingrid". Kira had told them: “She\'s a dentist at the clinic by the station.” "She is lovely", Kira '
            'wrote. The operation produced "Kira met Kira\'s new landlord Ingrid last Friday".')
    [ex] = read_feedback(text).examples
    assert ex.question == "What does Kira's landlord do?" and (ex.gold, ex.answer) == ("dentist", "met Ingrid")
    assert ex.turns == [("Kira", "She's a dentist at the clinic by the station."), ("Kira", "She is lovely")]
    assert ex.items == ["Kira met Kira's new landlord Ingrid last Friday"]
    assert "keep_details" in read_evidence("extract", text).weights


def test_the_format_controls_are_registered_renderings_of_attribution():
    names = [f"attribution_{fmt}" for fmt in FORMATS]
    assert set(names) <= set(kind_names())
    for name in names:
        kind = get_kind(name)
        assert kind.rendering_of == "attribution" and kind.control and kind.uses_attribution
    assert all(get_kind(n).rendering_of is None for n in ("attribution", "outcome", "score", "empty", "misleading"))


def test_restyle_keeps_the_head_and_every_part_of_memopts_examples():
    from memopt.feedback.build import Feedback

    examples = native(CASES).split("\n\n")
    examples = [e.split("\n", 1)[1] for e in examples]  # without 'Example i:'
    assert [parts_of(e, c.operation) for e, c in zip(examples, CASES, strict=True)] == CASES
    fb = Feedback("extract", "abc123", {"ExtractionError": 3}, examples[:3])
    for fmt in FORMATS:
        styled = restyle(fb, fmt)
        head = styled.text().split("\n\n")[0]
        assert head == fb.text().split("\n\n")[0] and "ExtractionError × 3" in head
        assert "Example 1:" not in styled.text() and styled.kind == f"attribution_{fmt}"
        assert len(read_feedback(styled.text()).examples) == 3


def test_held_out_wordings_are_read_as_measured_once():
    """The held-out half (tests/feedback_formats.HELD_OUT: wordings the reader was not tuned on) was measured once
    after tuning (docs/simlm.md, Reading feedback in other formats); this keeps the reader from falling below what
    was measured then: every example found, the evidence at least 0.6 of the native format's in each, 0.85 on
    average (measured: 0.67–1.00, mean 0.92). The reader was not changed after that measurement."""
    base = strength(CASES, native)
    values = []
    for name, text in renderings(CASES, "held_out").items():
        assert len(read_feedback(text).examples) == len(CASES), name
        values.append(strength(CASES, HELD_OUT[name]) / base)
        assert values[-1] >= 0.6, (name, values[-1])
    assert sum(values) / len(values) >= 0.85, values


@pytest.mark.slow  # 24 round-one attributions with SimLM (CI runs it with -m slow)
@pytest.mark.parametrize("half", ["tuned", "held_out"])
def test_real_feedback_in_every_format_shows_every_example(half):
    """`python -m tests.feedback_formats [--held-out]`'s second table: memopt's real round-one feedback re-rendered;
    every rendering's examples are all found, and native is the reference (1.00)."""
    from tests.feedback_formats import real_table

    lines = real_table(half)
    rows = {cells[0]: cells[1:] for cells in ([c.strip() for c in line.strip("|").split("|")] for line in lines[3:])}
    assert lines[0] == "12 op feedbacks" and "native" in rows and len(rows) > 4
    assert rows["native"][2] == "1.00"
    assert all(found == "1.00" for found, _, _ in rows.values()), rows


# --- feedback in any wording (issue 47): what a sentence says, not memopt's phrasing ---------------------------

OLD, NEW = "Zane started rock climbing at the Arts Hub", "Zane started a new job at Hartwell"


@pytest.mark.parametrize("said", [
    f"The memory '{OLD}' was overwritten by '{NEW}'.",  # memopt's own passive
    f"'{NEW}' overwrote the memory '{OLD}'.",
    f"The update overwrote the memory '{OLD}' with '{NEW}'.",
    f"The update replaced '{OLD}' with '{NEW}'.",
    f"It overwrote '{OLD}' even though '{NEW}' did not contradict it.",
    f"mem0.update turned '{OLD}' into '{NEW}'.",
    f"Instead of adding '{NEW}', it rewrote '{OLD}'.",
    f"The stored memory changed from '{OLD}' to '{NEW}'.",
    f"Memory before: '{OLD}'. Memory after: '{NEW}'.",
    f"The update step overwrote {OLD} with {NEW}.",
    f"{OLD} was replaced by {NEW}, although nothing contradicted it.",
])
def test_a_replaced_memory_is_read_in_any_voice_and_order(said):
    """Which memory replaced which is read from what the sentence says: active or passive, the verb before both
    memories or between them, with or without quotes, or labels of before and after."""
    text = (f"Question: Where does Zane take rock climbing classes?\nGold answer: Arts Hub\nSystem answered: "
            f"Hartwell\nEvidence: Zane: I started rock climbing last weekend at the Arts Hub.\nNote: {said}")
    [example] = read_feedback(text).examples
    assert example.replaced == [(OLD, NEW)], said
    assert read_evidence("update", text).weights == {"update_on_contradiction": 1.0}


def test_two_sentences_do_not_make_a_replacement():
    """A word of replacing in one sentence pairs no memories of two: 'X. (a compatible memory was overwritten) Y.'"""
    text = (f"Question: Where does Zane take rock climbing classes?\nGold answer: Arts Hub\nSystem answered: Hartwell\n"
            f"Note: The operation produced '{NEW}'. This was blamed as an UpdateError (a memory was overwritten). "
            f"The stored memory '{OLD}' is gone.")
    [example] = read_feedback(text).examples
    assert example.replaced == [] and example.removed == [OLD]


def test_an_example_told_over_several_paragraphs_is_one_example():
    """A ticket's sections are paragraphs: they belong to the question above them, and the question asked again in
    its steps starts no second example."""
    from tests.feedback_renderings import bug_ticket

    text = "\n\n".join(bug_ticket(case) for case in CASES)
    found = read_feedback(text).examples
    assert [ex.question for ex in found] == [case.question for case in CASES]
    assert [ex.gold for ex in found] == [case.gold for case in CASES]


def test_renderings_in_other_words_give_the_evidence_of_the_native_one():
    """Tuning figures (tests/feedback_renderings.py was written while the reader was changed): every rendering there
    recovers the native strength on these cases."""
    from memopt.feedback.formats import load_renderings

    for name, one in load_renderings("tests/feedback_renderings.py").items():
        assert strength(CASES, lambda cs, one=one: "\n\n".join(one(c) for c in cs)) == 1.0, name


def test_renderings_are_data(tmp_path):
    """A file of render functions is read as such: each function's name, and one clear error for a broken file."""
    from memopt.core.errors import ConfigError
    from memopt.feedback.formats import load_renderings
    from memopt.feedback.kinds import rendering_kinds

    good = tmp_path / "mine.py"
    good.write_text("def terse(p):\n    return f'{p.question} -> {p.answer} (want {p.gold})'\n\n"
                    "def _helper(p):\n    return ''\n")
    assert list(load_renderings(good)) == ["terse"]
    assert rendering_kinds(str(good)) == ["attribution_terse"] and "attribution_terse" in kind_names()
    assert get_kind("attribution_terse").rendering_of == "attribution"
    # a file as other people write them: dataclasses of its own, and a RENDERINGS table that names its functions
    table = tmp_path / "table.py"
    table.write_text("from dataclasses import dataclass\nfrom typing import Any\n\n@dataclass\nclass Row:\n"
                     "    q: str\n\ndef _one(p):\n    return f'Q: {Row(p.question).q} / got {p.answer}'\n\n"
                     "__all__ = ['RENDERINGS', 'Any']\nRENDERINGS = {'ticket': _one, 'ticket_too': _one}\n")
    assert list(load_renderings(table)) == ["ticket", "ticket_too"]
    broken = tmp_path / "broken.py"
    broken.write_text("def fails(p):\n    return p.nothing\n")
    with pytest.raises(ConfigError, match=r"broken.py: fails\(\) failed"):
        load_renderings(broken)
    with pytest.raises(ConfigError, match="not a Python file"):
        load_renderings(tmp_path / "missing.py")


@pytest.mark.parametrize("said", [
    f"The update removed {OLD.replace('Arts Hub', 'Arts Hub on Sundays')}.",
    f"'{OLD}' is no longer in the memory.",
    f"deleted: {OLD}",
])
def test_a_removed_memory_is_read_with_or_without_quotes(said):
    text = (f"Question: Where does Zane take rock climbing classes?\nGold answer: Arts Hub\nSystem answered: Not "
            f"mentioned\nNote: {said}")
    [example] = read_feedback(text).examples
    assert len(example.removed) == 1 and example.removed[0].startswith("Zane started rock climbing"), said
    assert read_evidence("update", text).weights == {"delete_only_explicit": 1.0}


def test_headings_tags_and_key_values_are_labels():
    """'### Expected' over the lines below it, '<expected>Arts Hub</expected>' and expected="Arts Hub" all label the
    gold answer, as 'Expected: Arts Hub' does."""
    for text in (f"### Question\nWhere does Zane take rock climbing classes?\n### Expected\nArts Hub\n### Got\n"
                 f"Hartwell\n### Memory\n{NEW}",
                 f"<question>Where does Zane take rock climbing classes?</question>\n<expected>Arts Hub</expected>\n"
                 f"<actual>Hartwell</actual>\n<memory>{NEW}</memory>",
                 f'question="Where does Zane take rock climbing classes?"; expected="Arts Hub"; got="Hartwell"; '
                 f'memory="{NEW}"'):
        [example] = read_feedback(text).examples
        assert (example.gold, example.answer, example.items) == ("Arts Hub", "Hartwell", [NEW]), text
