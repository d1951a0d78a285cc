"""SimLM's reflection finds who spoke from where a name stands beside the words, whatever the layout calls it (issue
47l): a name glued to its words by an arrow ('Priya> I ...'), a quoted name right before quoted words in one record
('said(q7, "Priya", "I ...")', '{who: "Priya", line: "I ..."}'), a field naming the speaker one heading away from the
words, and a diff hunk headed by the question itself. One construction per mechanism, worded here (people, values and
labels of our own)."""

from __future__ import annotations

from memopt.simlm.examples import read_feedback

Q, GOLD, GOT = "Which bakery does Priya buy sourdough from?", "Juniper Loaf", "Bramble Bakehouse"
TURN = "I get my sourdough from Juniper Loaf every Saturday morning."
KEPT = ["Priya adopted a greyhound called Pip", "Priya is learning the cello"]


def _one(text: str):
    [example] = read_feedback(text).examples
    return example


def test_a_name_glued_to_its_words_by_an_arrow():
    """'Priya> I ...' (a chat or shell prompt with no space before '>') is Priya's turn."""
    ex = _one(f"Asked: {Q}\nShould be: {GOLD}\nModel said: {GOT}\n\nThe line it saw:\n    Priya> {TURN}")
    assert ex.turns == [("Priya", TURN)]


def test_a_quoted_name_right_before_quoted_words_in_one_fact():
    """A term whose arguments are a quoted name and then quoted words: the name is who said them."""
    text = (f'question(q7, "{Q}").\nwant(q7, "{GOLD}").\nhave(q7, "{GOT}").\n'
            f'utterance(q7, 2, "Priya", "{TURN}").\nstored(q7, "{KEPT[0]}").')
    ex = _one(text)
    assert (ex.question, ex.gold, ex.answer) == (Q, GOLD, GOT)
    assert ex.turns == [("Priya", TURN)]


def test_a_quoted_name_and_quoted_words_in_a_flow_mapping():
    """'{who: "Priya", line: "I ..."}' (a YAML flow mapping, labels that name no turn) is Priya's turn."""
    text = (f'- ask: "{Q}"\n  want: "{GOLD}"\n  have: "{GOT}"\n  convo:\n'
            f'    - {{who: "Priya", line: "{TURN}"}}')
    ex = _one(text)
    assert ex.turns == [("Priya", TURN)]


def test_a_speaker_field_one_heading_below_the_words():
    """The words' field and the field naming who spoke them, with a bare heading ('meta:') between: one turn."""
    text = (f"ask: {Q}\nwant: {GOLD}\nhave: {GOT}\ntrail:\n  kind: chat\n  body: {TURN}\n  meta:\n"
            f"    author: Priya\n  kind: store\n  body: {KEPT[0]}")
    ex = _one(text)
    assert ex.turns == [("Priya", TURN)]


def test_a_diff_hunk_headed_by_the_question():
    """'@@ Which ...? @@' over '-Juniper Loaf' / '+Bramble Bakehouse' under '--- wanted' / '+++ observed': the hunk's
    header is the question, the old side the gold, the new side the answer."""
    text = f"--- wanted\n+++ observed\n@@ {Q} @@\n-{GOLD}\n+{GOT}\n\nSpeaker Priya said: {TURN}"
    ex = _one(text)
    assert (ex.question, ex.gold, ex.answer) == (Q, GOLD, GOT)


def test_a_chat_line_under_a_label_of_reading_is_a_turn():
    """Under 'What the extractor read:', 'Priya> I ...' is what Priya said (a chat line), not a memory it read."""
    text = f"Asked: {Q}\nShould be: {GOLD}\nModel said: {GOT}\n\nWhat the extractor read:\n    Priya> {TURN}"
    ex = _one(text)
    assert (ex.turns, ex.context) == ([("Priya", TURN)], [])


def test_two_labelled_values_on_one_line_between_bars():
    """'Esperado: "X"  |  Obtido: "Y"' (any language): each label takes the value after it, not the first label both."""
    for gold, got in (("Expected", "Got"), ("Atteso", "Ottenuto"), ("Esperado", "Obtido")):
        ex = _one(f'Asked: "{Q}"\n{gold}: "{GOLD}"  |  {got}: "{GOT}"\nPriya: {TURN}')
        assert (ex.gold, ex.answer) == (GOLD, GOT)


def test_a_heading_in_capitals_is_no_answer():
    """A title line in capitals ('RAPPORTO DI ERRORE #4') over the example is no value, in any language."""
    ex = _one(f'RAPPORTO DI ERRORE #4\nAsked: "{Q}"\nExpected: "{GOLD}"\nPriya: {TURN}')
    assert ex.answer is None


def test_a_sentence_about_the_facts_in_brazilian_portuguese_is_no_memory():
    """'Nenhum dos fatos gravados cita Priya' talks about the stored facts ('fatos', Brazil's spelling): no memory."""
    ex = _one(f'Pergunta: "{Q}"\nEsperado: "{GOLD}"\nObtido: "{GOT}"\nNota: Nenhum dos fatos gravados cita Priya.\n'
              f'Gravado:\n  * {KEPT[0]}')
    assert ex.items == [KEPT[0]]


def test_bold_values_inside_a_sentence_are_quotes():
    """'We hoped for **X**; the assistant replied **Y**.': a bold span inside a sentence marks a value."""
    ex = _one(f'Asked: "{Q}"\n\nWe hoped for **{GOLD}**; the assistant replied **{GOT}**.\nPriya: {TURN}')
    assert (ex.gold, ex.answer) == (GOLD, GOT)


def test_aligned_labels_pointing_at_their_values_inside_cdata():
    """'want   > X' lines (labels padded to a column, '>' pointing at the value) inside an XML CDATA section."""
    text = (f'<case id="7"><detail><![CDATA[query  > {Q}\nwant   > {GOLD}\nhave   > {GOT}]]></detail>\n'
            f"<log><![CDATA[Priya said: {TURN}]]></log></case>")
    ex = _one(text)
    assert (ex.question, ex.gold, ex.answer) == (Q, GOLD, GOT)
    assert ex.turns == [("Priya", TURN)]


def test_an_error_class_beats_a_plain_word_for_the_error_type():
    """'Type: Defect  |  Label: RecallError' on one line: the error type is the class name, not the tracker's word."""
    ex = _one(f'Asked: "{Q}"\nType: Defect  |  Severity: High  |  Label: RecallError\nExpected: "{GOLD}"')
    assert ex.error == "RecallError"
