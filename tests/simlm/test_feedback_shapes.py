"""SimLM's reflection reads feedback in the shapes other people write it (issue 47b): one construction per mechanism,
worded here; each names the parts a person reads in it. The renderings of whole examples in these shapes are in
tests/feedback_renderings.py (`test_renderings_in_other_words_give_the_evidence_of_the_native_one`)."""

from __future__ import annotations

import pytest

from memopt.simlm.examples import read_feedback
from memopt.simlm.reflect import read_evidence

Q, TURN = "Who does Gina play volleyball with?", "I play volleyball every Wednesday with my sister Wes."
OLD, NEW = "Gina plays volleyball every Wednesday with her sister Wes", "Gina moved to a new flat in Leeds"


def _one(text: str):
    [example] = read_feedback(text).examples
    return example


@pytest.mark.parametrize("sep", [",", "\t", ";"])
def test_a_row_under_a_header_of_columns_named_in_any_words(sep):
    """A CSV, TSV or semicolon export: each cell read under its column's name, the speaker column paired with the
    column of their words."""
    header = ["case", "user query", "want", "bot said", "said by", "utterance", "stage out"]
    row = ["1", Q, "Wes", "Not mentioned", "Gina", TURN, NEW]
    ex = _one(sep.join(header) + "\n" + sep.join(f'"{c}"' if sep in c else c for c in row))
    assert (ex.question, ex.gold, ex.answer, ex.turns, ex.items) == (Q, "Wes", "Not mentioned", [("Gina", TURN)], [NEW])


def test_a_key_value_log_line_is_a_record():
    """logfmt: quoted and bare values, indexed keys, a speaker key beside the key of their words."""
    ex = _one(f'level=warn q="{Q}" expected=Wes got="Not mentioned" src.speaker[0]=Gina src.text[0]="{TURN}" '
              f'removed[0]="{OLD}"')
    assert (ex.gold, ex.answer, ex.turns, ex.removed) == ("Wes", "Not mentioned", [("Gina", TURN)], [OLD])


def test_a_diff_of_the_store_gives_what_the_old_side_had_and_the_new_side_has():
    text = (f"diff --git a/expected b/actual\n--- expected\n+++ actual\n@@ answer to: {Q} @@\n-Wes\n+Not mentioned\n"
            f"@@ memory store after mem0.update @@\n-{OLD}\n+{NEW}\n# source turn (Gina): {TURN}")
    ex = _one(text)
    assert (ex.gold, ex.answer, ex.turns, ex.replaced) == ("Wes", "Not mentioned", [("Gina", TURN)], [(OLD, NEW)])


def test_a_story_telling_several_examples_in_one_paragraph_gives_each():
    text = ("Two misses this week. When someone asked “What is the name of Xavi's rabbit?” the assistant said "
            "“Rocky”, although Xavi had told it “I adopted a rabbit named Milo last month”; the right answer is "
            f"“Milo”. Later, asked “{Q}”, it said “Not mentioned” instead of “Wes”, and the update had deleted "
            f"“{OLD}”.")
    first, second = read_feedback(text).examples
    assert (first.gold, first.answer, first.turns) == ("Milo", "Rocky", [("Xavi", "I adopted a rabbit named Milo "
                                                                                   "last month")])
    assert (second.question, second.gold, second.answer, second.removed) == (Q, "Wes", "Not mentioned", [OLD])


def test_capitalised_labels_of_a_report_are_no_speakers():
    """'Impact:', 'Trigger:' head fields of a post-mortem (names are used as names elsewhere); a field whose own
    words quote someone is still no turn of the label, and a possessive names the speaker of the quote."""
    ex = _one(f"Post-mortem. Impact: for the query “{Q}” the assistant returned “Not mentioned” instead of the "
              f"reference answer “Wes”. Trigger: the relevant turn was Gina's message “{TURN}”. Root cause: the update "
              f"step removed the memory “{OLD}”.")
    assert (ex.question, ex.gold, ex.answer, ex.turns, ex.removed) == (Q, "Wes", "Not mentioned", [("Gina", TURN)],
                                                                       [OLD])
    said = f"Impact: for the query “{Q}” the assistant returned “Not mentioned”. Cause: the update removed “{OLD}”."
    assert read_evidence("update", said).weights == {"delete_only_explicit": 1.0}


@pytest.mark.parametrize(("said", "kept"), [
    ("Frage: {q}\nErwartet: Wes\nTatsächlich: Not mentioned\nGina hat gesagt: „{turn}“\n"
     "Der Schritt hat „{old}“ durch „{new}“ ersetzt.", "replaced"),
    ("Pregunta: ¿{q}\nRespuesta esperada: Wes\nRespuesta del sistema: Not mentioned\nGina dijo: «{turn}»\n"
     "La actualización borró «{old}».", "removed"),
    ("Question posée : {q}\nRéponse attendue : Wes\nRéponse obtenue : Not mentioned\nGina a dit : « {turn} »\n"
     "La mise à jour a écrasé « {old} » par « {new} ».", "replaced"),
    ("Pergunta: {q}\nResposta esperada: Wes\nResposta do sistema: Not mentioned\nGina disse: “{turn}”\n"
     "A atualização apagou “{old}”.", "removed"),
])
def test_other_languages_are_read_through_their_words(said, kept):
    """German, Spanish, French and Portuguese labels, verbs of saying, of replacing (the verb last, too) and of
    removing, from the table of cue words (memopt/simlm/feedback_cues.yaml)."""
    ex = _one(said.format(q=Q, turn=TURN, old=OLD, new=NEW))
    assert (ex.question, ex.gold, ex.answer, ex.turns) == (Q, "Wes", "Not mentioned", [("Gina", TURN)])
    assert getattr(ex, kept) == ([(OLD, NEW)] if kept == "replaced" else [OLD])


def test_markup_of_trackers_and_reviews():
    """A line that is only *emphasis* or **bold** heads a section, one ending in a colon is a label, a code span or
    an emphasis of words is a quote, an identifier stays a name; a request to the reader starts no example; the value
    an assertion compares with is the expected one; code is no answer."""
    ex = _one(f"*Steps to reproduce*\n# Conversation turn: Gina says “{TURN}”\n# Ask: {Q}\n\n*Expected:* Wes\n"
              f"*Actual:* Not mentioned\n*mem0.update output:* `{NEW}`\nCould you take another look at `mem0.update`?")
    assert (ex.question, ex.gold, ex.answer, ex.items) == (Q, "Wes", "Not mentioned", [NEW])
    ex = _one(f"question = '{Q}'\nevidence = ('Gina', '{TURN}')\n    answer = memory.ask(question)\n"
              f">       assert answer == 'Wes'\nE       AssertionError: expected 'Wes', got 'Not mentioned'")
    assert (ex.gold, ex.answer, ex.turns) == ("Wes", "Not mentioned", [("Gina", TURN)])


def test_a_csv_cell_may_span_lines_and_a_log_may_abbreviate():
    """A quoted CSV cell over two lines stays one cell; 'gt' / 'pred' name the answers; a question written without
    its mark under a label that says it asks is still the question."""
    ex = _one(f'case,question,expected,got,speaker,said\n1,{Q},Wes,Not mentioned,Gina,"I play volleyball every '
              f'Wednesday\nwith my sister Wes."')
    assert (ex.question, ex.gold, ex.answer, ex.turns) == (Q, "Wes", "Not mentioned", [("Gina", TURN)])
    asked = "who" + Q[3:]  # 'who does Gina play volleyball with?'
    ex = _one(f"Query: {asked.rstrip('?')}\ngt: Wes\npred: Not mentioned\nGina: {TURN}")
    assert (ex.question, ex.gold, ex.answer, ex.turns) == (asked, "Wes", "Not mentioned", [("Gina", TURN)])


def test_an_html_report_is_read_as_its_text_and_tables():
    """An HTML e-mail: its paragraphs as lines, its table's rows under the header row, entities and breaks read."""
    text = (f"<p>Hi team,</p><p>one failure from last night:</p><table><tr><th>Question</th><th>Expected</th>"
            f"<th>Got</th><th>Speaker</th><th>Said</th><th>Stored</th></tr><tr><td>{Q}</td><td>Wes</td>"
            f"<td>Not mentioned</td><td>Gina</td><td>{TURN}</td><td>{NEW}<br>Gina&#39;s flat has a garden</td></tr>"
            f"</table><p>Thanks!</p>")
    ex = _one(text)
    assert (ex.question, ex.gold, ex.answer, ex.turns) == (Q, "Wes", "Not mentioned", [("Gina", TURN)])
    assert ex.items == [NEW, "Gina's flat has a garden"]


def test_a_turn_may_follow_its_speaker_after_a_dash():
    ex = _one(f"1. Question — {Q}\n   + right answer — Wes\n   + system — Not mentioned\n   + Gina (in the chat) — "
              f"{TURN}\n   + in memory — {NEW}")
    assert (ex.gold, ex.answer, ex.turns, ex.items) == ("Wes", "Not mentioned", [("Gina", TURN)], [NEW])


def test_a_quoted_question_is_no_memory_a_word_of_replacing_could_pair():
    """'asked it "...?" -> it said "X"': the arrow stands between the question and the answer, not two memories."""
    ex = _one(f'asked it "{Q}" -> it said *Gina\'s sister Mia*, should be *Wes*. Gina literally said "{TURN}".')
    assert (ex.question, ex.gold, ex.answer, ex.replaced) == (Q, "Wes", "Gina's sister Mia", [])


def test_escalations_and_reviews():
    """A word in capitals heads a message ('ESCALATION - ...'), no speaker; 'wrote X over Y' puts X in Y's place; a
    paragraph that ends asking the reader something ('Could you ...?') goes on with the example above it."""
    ex = _one(f'ESCALATION - Tier 2\nCustomer impact: the assistant told the user "Not mentioned" when they asked '
              f'"{Q}"; the correct answer is "Wes".\nWhat was said earlier in the chat (Gina): "{TURN}"\nAgent '
              f"assessment: the update step wrote '{NEW}' over the saved note '{OLD}', even though both can be true.")
    assert (ex.gold, ex.answer, ex.turns, ex.replaced) == ("Wes", "Not mentioned", [("Gina", TURN)], [(OLD, NEW)])
    ex = _one(f"> Q: {Q}\n> expected `Wes`, got `Not mentioned`\n\nThe source turn is Gina's \"{TURN}\". The update "
              f"deleted '{OLD}' (it was in the store). Could you take another look at `mem0.update` before we merge?")
    assert (ex.gold, ex.answer, ex.turns, ex.removed) == ("Wes", "Not mentioned", [("Gina", TURN)], [OLD])
