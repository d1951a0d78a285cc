"""The reflection reads what an example claims from its error type and its values, whatever the layout (issue 47).

Each feedback below is written in a layout of its own (a ledger with '~' columns, a telegram, a spreadsheet row, a
Lisp form, a changelog), none of them a rendering the reader was written against; its comment on the case is worded
so that no phrasing the reader knows carries the claim. The values are verbatim, as in every rendering: the evidence
must come from the error type and from how the values relate (`memopt.simlm.example_claims`).
"""

from __future__ import annotations

import pytest

from memopt.simlm.example_claims import claimed, error_kind, quoted_spans
from memopt.simlm.example_parts import Example
from memopt.simlm.examples import read_feedback
from memopt.simlm.reflect import read_evidence

LEDGER_SPEAKER = """\
#1 ~ extraction_error ~ mem0.extract
  ask   ~ Who does Xavi play badminton with?
  want  ~ Emma
  have  ~ Rocky
  line  ~ (Xavi) I play badminton every Wednesday with my cousin Emma.
  kept  ~ Alex got hired as a software engineer at Hartwell last Wednesday
  why   ~ nobody by that name shows up anywhere in what got kept
"""

TELEGRAM_OVERWRITE = """\
CASE 4 UPDATE-ERROR STOP QUERY Where does Zane take rock climbing classes? STOP WANTED Arts Hub GOT Hartwell STOP
ZANE WROTE ((I started rock climbing last weekend at the Arts Hub.)) STOP
'Zane started rock climbing at the Arts Hub' GONE, 'Zane started a new job at Hartwell' IN ITS SEAT STOP
BOTH COULD HOLD AT ONCE STOP BLAME mem0.update STOP
"""

ROW_DELETE = (
    "case\tq\twant\tgot\tspoken\tverdict\n"
    "5\tWho does Gina play volleyball with?\tWes\tNot mentioned\tGina ~ I play volleyball every Wednesday with my "
    "sister Wes.\tDELETION ERROR at mem0.update: 'Gina plays volleyball every Wednesday with her sister Wes' is no "
    "more, though nothing new fought it\n"
)

LISP_ABSTAIN = """\
(case 6
  (kind ResponseError) (op mem0.answer)
  (q "What is the name of Alex's cat?")
  (heard Xavi "Guess what, I adopted a cat named Olive last Saturday, so now the house is even busier!")
  (looked-up "[3 June 2023] Xavi adopted a kitten named Rocky last month")
  (verdict "Vera came out; 'Not mentioned' was the way to go, nowhere in the talk"))
"""

CHANGELOG_DATE = """\
## v0.4.1 - case 3 (extractionError, mem0.extract)
* Asking: When did Zane go to Greece?
* 1 December 2022 vs yesterday
* Zane, in chat -- I went to Greece yesterday, the highlight was the Acropolis.
* Written down -- Zane went to Greece yesterday, the highlight was the Acropolis
* Left as it was spoken, never pinned to the calendar.
"""

CHANGELOG_PARTIAL = """\
## v0.4.2 - case 7 (RESPONSE_ERROR, mem0.answer)
* Asking: What are the names of Mia's cats?
* Max, Luna vs Max
* Mia, in chat -- I have two cats, Max and Luna.
* Looked at -- [3 May 2023] Mia has a cat named Max | [9 May 2023] Mia has a cat named Luna
* Only half of the set came back.
"""

CASES = [  # (feedback, operation kind, the directive its claim calls for)
    pytest.param(LEDGER_SPEAKER, "extract", "all_participants", id="ledger-speaker-not-mentioned"),
    pytest.param(TELEGRAM_OVERWRITE, "update", "update_on_contradiction", id="telegram-compatible-overwritten"),
    pytest.param(ROW_DELETE, "update", "delete_only_explicit", id="row-non-conflicting-deleted"),
    pytest.param(LISP_ABSTAIN, "answer", "abstain", id="lisp-should-abstain"),
    pytest.param(CHANGELOG_DATE, "extract", "resolve_dates", id="changelog-relative-date-kept"),
    pytest.param(CHANGELOG_PARTIAL, "answer", "combine_all", id="changelog-partial-answer"),
]


@pytest.mark.parametrize(("feedback", "kind", "directive"), CASES)
def test_the_claim_is_read_from_the_error_type_and_the_values(feedback: str, kind: str, directive: str) -> None:
    ev = read_evidence(kind, feedback)
    assert ev.examples == 1
    assert ev.strength == 1.0, (ev.strength, ev.weights)
    assert max(ev.weights, key=ev.weights.__getitem__) == directive, ev.weights


def test_a_lost_detail_is_a_quoted_value_a_turn_holds_and_no_kept_statement_does() -> None:
    feedback = ("ask ~ Who wrote the book Alex called a favorite? ~ want Susanna Clarke ~ have Piranesi\n"
                "Alex ~ My favorite book right now is Piranesi, it was written by Susanna Clarke.\n"
                "kept ~ Alex's favorite book right now is Piranesi\n"
                "EXTRACTION ERROR ~ mem0.extract ~ the bit «Susanna Clarke» never made it across\n")
    ev = read_evidence("extract", feedback)
    assert max(ev.weights, key=ev.weights.__getitem__) == "keep_details", ev.weights
    assert ev.strength == 1.0


def test_no_claim_without_an_error_type_or_against_the_values() -> None:
    """The values decide: a speaker the kept statements name and a gold they hold show no extraction loss."""
    fine = Example(question="Who does Xavi play badminton with?", gold="Emma", answer="Rocky",
                   turns=[("Xavi", "I play badminton every Wednesday with my cousin Emma.")],
                   items=["Xavi plays badminton every Wednesday with Xavi's cousin Emma"], shows_output=True,
                   text="extraction_error\nXavi plays badminton every Wednesday with Xavi's cousin Emma")
    assert claimed(fine) == {}
    unnamed = LEDGER_SPEAKER.replace("extraction_error", "mystery")
    assert claimed(read_feedback(unnamed).examples[0]) == {}


@pytest.mark.parametrize("spelling", ["ExtractionError", "EXTRACTION_ERROR", "extraction-error", "extraction error",
                                      "Extraction Error", "extractionError"])
def test_the_error_type_in_any_spelling(spelling: str) -> None:
    assert error_kind(f"cause: {spelling} (mem0.extract)") == "extraction"


def test_spans_in_any_quotation_marks() -> None:
    text = "'Zane's gym' «Arts Hub» “Milo” 『Wes』 <![CDATA[Not mentioned]]> `Hartwell`"
    assert quoted_spans(text) == ["Zane's gym", "Arts Hub", "Milo", "Wes", "Not mentioned", "Hartwell"]


def test_a_question_the_markup_normalising_hides_is_read_as_written() -> None:
    """Bracketed records ('[ask "...?"]') that the layout normaliser takes for markup still hold the question."""
    feedback = ('[ask "Who does Xavi play badminton with?"]\n[why "extraction_error"]\n'
                '[kept "Alex got hired as a software engineer at Hartwell last Wednesday"]\n\n'
                "{Xavi} I play badminton every Wednesday with my cousin Emma.\n")
    assert [ex.question for ex in read_feedback(feedback).examples] == ["Who does Xavi play badminton with?"]
    ev = read_evidence("extract", feedback)
    assert (ev.strength, max(ev.weights, key=ev.weights.__getitem__)) == (1.0, "all_participants")


def test_turns_and_statements_are_found_by_their_shape_inside_wrappers() -> None:
    """A speaker in brackets after a label ('line: [Priya] She's ...') and values wrapped as 'Val(...)' are still a
    turn and the statements the memory held: the detail the turn holds and no statement does was lost."""
    feedback = ("verdict := EXTRACTION_ERROR @ mem0.summarize\n"
                "ask := Val(What does Priya's new landlord do for a living?)\n"
                "want := Val(dentist) ; have := Val(met Ruth)\n"
                "line := [Priya] I met my new landlord Ruth last month, we chatted for ages.\n"
                "line := [Priya] She's a dentist at the clinic by the station, super friendly too.\n"
                "kept := Val(Priya met Priya's new landlord Ruth last month)\n"
                "note := the bit «dentist» stayed behind\n")
    ev = read_evidence("summarize", feedback)
    assert ev.weights.get("keep_details", 0) > 0, ev.weights
