"""SimLM's reflection reads feedback in the voices and layouts other people write it (issue 47d): British formal
reports, wiki tickets, e-mail replies, the writers' own chat, terse notes, timelines, logs, reviews that tell the
context before the question. One construction per mechanism, worded here (people, values and labels of our own);
each names the parts a person reads in it."""

from __future__ import annotations

from memopt.simlm.examples import read_feedback
from memopt.simlm.reflect import read_evidence

Q, GOLD, GOT = "Where does Priya teach yoga?", "Riverside Studio", "Hartley Gym"
TURN = "I teach yoga at Riverside Studio every Tuesday evening."
KEPT = ["Priya adopted a dog named Biscuit", "Priya is learning Portuguese"]
OTHERS = ["Marco adopted a dog named Biscuit", "Marco is learning Portuguese"]
READ = ["[2 March 2024] Priya joined Hartley Gym", "[9 March 2024] Priya teaches yoga at Riverside Studio"]


def _one(text: str):
    [example] = read_feedback(text).examples
    return example


def _parts(ex) -> tuple:
    return ex.question, ex.gold, ex.answer, ex.turns


def test_british_formal_report_single_curly_quotes_and_run_in_headings():
    """‘X’ is a quote (an apostrophe inside a word stays one); 'Finding. Text' is a heading run into its paragraph;
    'stated' reports a turn, 'responded' the answer; '(i) ‘A’; (ii) ‘B’' is a list; 'mem0.answer' in a label is
    the operation's name, not the word 'answer'."""
    text = (f"Observation. Upon being asked ‘{Q}’, the service responded ‘{GOT}’.\n"
            f"Standard. The appropriate response, per the transcript, is ‘{GOLD}’.\n"
            f"Testimony. Priya stated: ‘{TURN}’\n"
            f"Entries consulted by mem0.answer: (i) ‘{READ[0]}’; (ii) ‘{READ[1]}’.\n"
            "Consequence. The user was misinformed whilst the record held the answer.")
    ex = _one(text)
    assert _parts(ex) == (Q, GOLD, GOT, [("Priya", TURN)])
    assert ex.context == READ and not ex.items


def test_wiki_markup_ticket():
    """Jira / Confluence markup: 'h2.' headings (no part), a {quote} block is quoted words, {{value}} a value,
    _italics_ a quote, '#' lines a numbered list; a value followed by a passive takes its role from it."""
    text = (f"h2. Overview\nWrong recall for _{Q}_\n\nh2. Details\n{{{{{GOT}}}}} was given by the assistant; "
            f"{{{{{GOLD}}}}} was expected.\n\nh3. Conversation\n{{quote}}\nPriya — {TURN}\n{{quote}}\n\n"
            f"h3. Facts written by mem0.extract\n# {KEPT[0]}\n# {KEPT[1]}")
    ex = _one(text)
    assert _parts(ex) == (Q, GOLD, GOT, [("Priya", TURN)])
    assert ex.items == KEPT


def test_an_email_reply_with_inline_quotes_and_the_writers_own_words():
    """A request to the reader ('Could anyone check these?') starts no example; the writer's first-person words
    naming an error class or an operation are no turn; a sentence about the facts the extractor wrote is no memory."""
    text = ("Hello Ana,\n\nOn Mon, Ana wrote:\n> Could anyone check these? Both came from the nightly run.\n>\n"
            f"> Someone asked \"{Q}\" and the bot replied \"{GOT}\". Correct is \"{GOLD}\".\n"
            f">    Priya: \"{TURN}\"\n\n"
            "Quick take: the extractor never kept it.\nPriya said it herself, yet none of the facts even mention her.\n"
            "I logged it as ExtractionError on mem0.extract.\nmem0.extract wrote:\n"
            + "".join(f"  - {k}\n" for k in OTHERS) + "\nBest,\nLuis")
    [ex] = read_feedback(text).examples
    assert _parts(ex) == (Q, GOLD, GOT, [("Priya", TURN)])
    assert ex.items == OTHERS
    assert read_evidence("extract", text).strength == 1.0  # no fact about Priya: the speaker was dropped


def test_the_writers_chat_is_prose_not_conversation_evidence():
    """'[14:31] lena: ...' is a line of the people discussing the case; their questions about it ('where did it
    come from?', 'what did mem0.answer see?') start no example; quotes joined by '+' share the role of the first."""
    text = (f"[14:31] lena: one more — \"{Q}\" → assistant says {GOT}, should be {GOLD}\n"
            "[14:32] omar: where did it come from?\n"
            f"[14:33] lena: Priya said: {TURN}\n"
            "[14:34] omar: what did mem0.answer see?\n"
            f"[14:35] lena: retrieved \"{READ[0]}\" + \"{READ[1]}\"\n"
            "[14:36] omar: right, tagged ResponseError")
    ex = _one(text)
    assert _parts(ex) == (Q, GOLD, GOT, [("Priya", TURN)])
    assert ex.context == READ


def test_terse_notes_arrow_answer_angle_turn_and_parenthesised_gold():
    """'"Q?" -> X (want Y)': the arrow gives what the question got, the aside what was wanted; 'Name > words' is
    a turn; an item's number ('[2]') and a heading naming the op and error class are no answers."""
    text = (f"[2]\n+ [mem0.extract] ExtractionError\n  - \"{Q}\" -> {GOT} (want {GOLD})\n  - Priya > {TURN}\n"
            f"  - out: {KEPT[0]} ; {KEPT[1]}")
    ex = _one(text)
    assert _parts(ex) == (Q, GOLD, GOT, [("Priya", TURN)])
    assert ex.items == KEPT


def test_dot_leaders_enumerators_and_a_value_naming_its_own_role():
    """'key ...... value' is a labelled field; '(a) X; (b) Y' a list; under the label 'exp/got' each value's own
    role word decides ('exp X / got Y')."""
    text = (f"  query ....... \"{Q}\"\n  exp/got ..... exp {GOLD} / got {GOT}\n"
            f"  source ...... Priya said \"{TURN}\"\n  stored ...... (a) {KEPT[0]}; (b) {KEPT[1]}")
    ex = _one(text)
    assert _parts(ex) == (Q, GOLD, GOT, [("Priya", TURN)])
    assert ex.items == KEPT


def test_a_timeline_of_events():
    """An event's leading time ('T+03m', '09:41:07') is no part of it; 'Priya writes in the chat: ...' is her turn;
    'X   <-- wrong, correct is Y' is the answer and a note naming the gold."""
    text = (f"OUTAGE\nT+00m  Priya writes in the chat: {TURN}\n09:41:07  mem0.extract stores:\n"
            + "".join(f"    * {k}\n" for k in KEPT)
            + f"T+09m  user asks: {Q}\nT+10m  bot replies: {GOT}   <-- wrong, correct is {GOLD}")
    ex = _one(text)
    assert _parts(ex) == (Q, GOLD, GOT, [("Priya", TURN)])
    assert ex.items == KEPT


def test_a_review_telling_the_context_before_each_question():
    """'Given this turn:' introduces the paragraph after it; when the context comes before the questions, such
    paragraphs lead the next example, not the one before; 'comes back as X' names the answer; a hedge in the
    writer's first person ('As I read it, ...') is no turn."""
    def review(turn: str, kept: str, q: str, got: str, gold: str) -> str:
        return (f"Blocking: the mem0.extract change.\n\nFor this turn:\n\n    Priya: {turn}\n\nit stores:\n\n"
                f"    {kept}\n\nso \"{q}\" comes back as `{got}` though it should be `{gold}`.\n\n"
                "As I read it, the message had the answer and the extractor lost it.")
    second = ("Who walks Biscuit?", "Tomas", "Priya", "My neighbour Tomas walks Biscuit on Sundays.",
              "Priya likes long walks")
    text = review(TURN, KEPT[0], Q, GOT, GOLD) + "\n\n" + review(second[3], second[4], *second[:2], second[2])
    first, other = read_feedback(text).examples
    assert _parts(first) == (Q, GOLD, GOT, [("Priya", TURN)]) and first.items == [KEPT[0]]
    assert _parts(other) == (second[0], second[2], second[1], [("Priya", second[3])]) and other.items == [second[4]]


def test_log_lines_with_levels_and_columns():
    """A level ('INFO', pytest's 'E') goes and the columns before the message label it; a title between rules is
    a heading."""
    text = (f"    question = \"{Q}\"\n    expected = '{GOLD}'\nE   assert '{GOT}' == '{GOLD}'\n"
            "------------- Captured stdout -------------\n"
            f"INFO     dialogue     Priya: {TURN}\n"
            + "".join(f"INFO     mem0.extract  wrote  {k}\n" for k in KEPT))
    ex = _one(text)
    assert (ex.question, ex.gold, ex.turns) == (Q, GOLD, [("Priya", TURN)])
    assert ex.items == KEPT


def test_xml_with_several_attributes_a_note_label_and_a_relative_clause_of_saying():
    """'<step kind="x" name="y">' is labelled by its tag; 'Reviewer note: ...' is a label and its text, no memory;
    'Priya, who said “...”' is her turn."""
    text = (f'<case>\n  <step system="mem0" phase="answer">mem0.answer</step>\n  <ask>{Q}</ask>\n'
            f"  <want>{GOLD}</want>\n  <got>{GOT}</got>\n</case>\n"
            f"The evidence came from Priya, who said “{TURN}”\n"
            "Reviewer note: The reference answer names one place; the response named another.")
    ex = _one(text)
    assert _parts(ex) == (Q, GOLD, GOT, [("Priya", TURN)])
    assert not ex.items


def test_what_a_label_of_reading_holds_is_read_and_none_of_it_an_answer():
    """Under 'at answer time it reads:' or 'fetches from memory:', memories are read, and a cut fragment of one
    ('Priya's boss') is no answer; 'should be a, b, c' and 'should be vet' name the gold."""
    text = (f"\"What pets does Priya have?\" → the bot says dog, should be dog, cat\nat answer time it reads:\n"
            f"  {READ[0]}; Priya's boss\n  {READ[1]}")
    ex = _one(text)
    assert (ex.gold, ex.answer) == ("dog, cat", "dog")
    assert ex.context[:1] == [READ[0]] and not ex.items
    ex = _one("\"What does Priya's brother do?\" → bot says teacher, should be vet\nPriya said: My brother is a vet.")
    assert (ex.gold, ex.answer) == ("vet", "teacher")


def test_italian_and_dutch_reports():
    """Role words are data: Italian and Dutch name the question, the answers, a turn, what was stored and a
    replacement ('è stata sovrascritta da', 'werd overschreven door')."""
    old, new = "Priya teaches yoga at Riverside Studio", "Priya joined Hartley Gym"
    it = (f"Domanda posta: «{Q}»\nRisposta del sistema: «{GOT}»\nRisposta corretta: «{GOLD}»\n"
          f"Priya ha detto: «{TURN}»\nFatti prodotti: «{new}»\n"
          f"La memoria «{old}» è stata sovrascritta da «{new}», anche se non erano in conflitto.")
    nl = (f"Vraag: {Q}\nAntwoord van het systeem: {GOT}\nVerwacht antwoord: {GOLD}\nPriya zei: \"{TURN}\"\n"
          f"Opgeslagen:\n  - {new}\nHet geheugen '{old}' werd overschreven door '{new}', hoewel ze niet botsten.")
    for text in (it, nl):
        ex = _one(text)
        assert _parts(ex) == (Q, GOLD, GOT, [("Priya", TURN)]) and ex.replaced == [(old, new)]


def test_an_ascii_table_of_labels_and_values_is_one_record():
    """'+----+' borders around '| label | value |' rows: a two-column table of short labels is one record."""
    rows = [("what", "detail"), ("query", Q), ("expected", GOLD), ("actual", GOT), ("speaker", "Priya"),
            ("words", TURN), ("stored", KEPT[0]), ("stored", KEPT[1])]
    border = "+" + "-" * 12 + "+" + "-" * 62 + "+"
    lines = [border, *(f"| {a:<10} | {b:<60} |" for a, b in rows[:1]), border.replace("-", "="),
             *(f"| {a:<10} | {b:<60} |" for a, b in rows[1:]), border]
    ex = _one("\n".join(lines))
    assert _parts(ex) == (Q, GOLD, GOT, [("Priya", TURN)]) and ex.items == KEPT


def test_an_sql_insert_is_a_record_per_row():
    text = ("INSERT INTO misses (asked, expected_answer, model_answer, speaker, utterance, written)\n"
            f"VALUES ('{Q}', '{GOLD}', '{GOT}', 'Priya', '{TURN}', '{KEPT[0]}');")
    ex = _one(text)
    assert _parts(ex) == (Q, GOLD, GOT, [("Priya", TURN)]) and ex.items == [KEPT[0]]


def test_protobuf_text_blocks_and_a_string_literal_note():
    """'turn { speaker: "Priya" text: "..." }' is a turn; the outermost block is the record; a note written as one
    string literal is read inside ('"The memory 'X' was overwritten by 'Y'"')."""
    old, new = "Priya teaches yoga at Riverside Studio", "Priya joined Hartley Gym"
    text = (f'miss {{\n  query: "{Q}"\n  expected: "{GOLD}"\n  actual: "{GOT}"\n  turn {{\n    speaker: "Priya"\n'
            f'    text: "{TURN}"\n  }}\n  stored: "{new}"\n'
            f"  note: \"The memory '{old}' was overwritten by '{new}', though both could hold.\"\n}}")
    ex = _one(text)
    assert _parts(ex) == (Q, GOLD, GOT, [("Priya", TURN)]) and ex.replaced == [(old, new)]


def test_a_label_word_quoting_someone_is_no_speaker():
    """'Description: Priya said "I ..."': the first person is in the words quoted, so 'Description' is a label."""
    text = (f"[FIRING] RecallMismatch op=mem0.extract\nSummary: \"{Q}\" answered \"{GOT}\", expected \"{GOLD}\".\n"
            f"Description: Priya said \"{TURN}\". Stored: {KEPT[0]}; {KEPT[1]}.")
    ex = _one(text)
    assert _parts(ex) == (Q, GOLD, GOT, [("Priya", TURN)]) and ex.items == [KEPT[0], f"{KEPT[1]}."]


def test_a_transcribed_voice_memo():
    """Spoken prose: an editor's tag ('[dictated]') and fillers ('um', 'uh') go; 'quote, ... unquote' is a quote;
    'came back with X' names the answer and ', when the right answer is Y' the gold; 'what got stored was A, and B'
    holds two memories; 'tagging it as ExtractionError' is no memory."""
    text = (f"[dictated] Right, um, the question was \"{Q}\" and the bot came back with {GOT}, uh, when the right "
            f"answer is {GOLD}. Priya had said, quote, {TURN} unquote. What got stored was {OTHERS[0]}, and "
            f"{OTHERS[1]}. Tagging it as ExtractionError.")
    ex = _one(text)
    assert _parts(ex) == (Q, GOLD, GOT, [("Priya", TURN.rstrip("."))]) and ex.items == [OTHERS[0], f"{OTHERS[1]}."]
    assert read_evidence("extract", text).strength == 1.0  # no stored fact names Priya: the speaker was dropped
