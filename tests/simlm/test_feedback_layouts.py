"""SimLM's reflection reads feedback laid out by more tools and voices (issue 47f): tables drawn with box-drawing
characters, PostgreSQL literals, and the other mechanisms below. One construction per mechanism, worded here (people,
values and labels of our own); each names the parts a person reads in it."""

from __future__ import annotations

from memopt.simlm.examples import read_feedback

Q, GOLD, GOT = "Which choir does Tomas sing in?", "Harbour Voices", "Lakeside Chorale"
TURN = "I sing bass with Harbour Voices on Thursday nights."
KEPT = ["Tomas bought a red kayak", "Tomas is training for a half marathon"]
READ = ["[4 April 2024] Tomas joined Lakeside Chorale's mailing list", "[8 April 2024] Tomas sings with Harbour Voices"]


def _one(text: str):
    [example] = read_feedback(text).examples
    return example


def _parts(ex) -> tuple:
    return ex.question, ex.gold, ex.answer, ex.turns


def test_a_table_drawn_with_box_characters_is_read_as_a_table():
    """'┌──┬──┐' borders and '│' bars are a table's; a first row of a label and a number heads a two-column record;
    a row label naming a turn and a name ('utterance · Tomas') labels Tomas's words."""
    width = 60
    rows = [("ref", "17"), None, ("query", Q), ("right", GOLD), ("bot said", GOT), ("utterance · Tomas", TURN),
            ("kept #1", KEPT[0]), ("kept #2", KEPT[1])]
    lines = ["┏" + "━" * 20 + "┳" + "━" * width + "┓"]
    for row in rows:
        lines.append("┣" + "━" * 20 + "╋" + "━" * width + "┫" if row is None else
                     f"┃ {row[0]:<18} ┃ {row[1]:<{width - 2}} ┃")
    lines.append("┗" + "━" * 20 + "┻" + "━" * width + "┛")
    ex = _one("\n".join(lines))
    assert _parts(ex) == (Q, GOLD, GOT, [("Tomas", TURN)])
    assert ex.items == KEPT


def test_an_sql_insert_with_dollar_quotes_and_an_array():
    """PostgreSQL literals: $$text$$ and $tag$text$tag$ are strings (an apostrophe inside stays), ARRAY[...] with a
    cast is a list, NULL is nothing."""
    text = ("INSERT INTO recall_misses (n, prompt, right_answer, bot_answer, remark, fetched) VALUES (\n"
            f"  4, $q$Which choir does Tomas sing in?$q$, $${GOLD}$$, E'{GOT}', NULL,\n"
            f"  ARRAY[$${READ[0]}$$, $${READ[1]}$$]::text[]\n);\n"
            "INSERT INTO recall_turns (n, who, said) VALUES\n"
            f"  (4, $$Tomas$$, $${TURN}$$);")
    ex = _one(text)
    assert _parts(ex) == (Q, GOLD, GOT, [("Tomas", TURN)])
    assert ex.context == READ


def test_columns_aligned_with_spaces():
    """A run of 'label   value' lines (a pandas Series, property rows with an icon before them) is labelled lines; a
    header of column names over numbered rows (a pandas DataFrame) is a table."""
    text = (f"✅ query        {Q}\n🟢 right        {GOLD}\n⛔ bot said     {GOT}\nName: 3, dtype: object\n\n"
            f"   person{' ' * 40}line\n0   Tomas  {TURN}\n\n"
            f"    role{' ' * 30}fact\n0  kept  {KEPT[0]}\n1  kept  {KEPT[1]}")
    ex = _one(text)
    assert _parts(ex) == (Q, GOLD, GOT, [("Tomas", TURN)])
    assert ex.items == KEPT


def test_an_alert_with_an_operation_title_and_pointed_turns():
    """'mem0.answer — why' is a title naming the operation (its 'answer' labels nothing); 'Tomas › words' is Tomas's
    turn (a lone '›' points; '‹X›' is still a quote)."""
    text = (f"mem0.answer — two fetched lines held the choir, neither was used\nquery: ‹{Q}›\nexpected: {GOLD}\n"
            f"bot said: {GOT}\n"
            f"chat: Tomas › {TURN}\nfetched: {READ[0]}\nfetched: {READ[1]}")
    ex = _one(text)
    assert _parts(ex) == (Q, GOLD, GOT, [("Tomas", TURN)])
    assert ex.context == READ and ex.operation == "mem0.answer"


def test_an_unpunctuated_auto_transcript():
    """Speech transcribed without punctuation: a bracketed header line is an editor's tag; 'okay so' and 'so yeah'
    are fillers; a conjunction opening a clause led by role words ends the clause before it; 'from Tomas ... word for
    word' quotes Tomas; 'item 1 A then item 2 B' lists A and B, what 'it read was' reads (an item about no one, C,
    is left out of them)."""
    text = (f"[Recording 12 - 02:05 - machine transcript]\nokay so next one the question was {Q} and the right answer "
            f"is {GOLD} but what came back was {GOT} so yeah\nthat quote is from Tomas and here it is word for word "
            f"{TURN} okay\nwhat it read was item 1 {READ[0]} then item 2 {READ[1]} then item 3 Nothing beats a "
            "quiet Sunday\nthats all")
    ex = _one(text)
    assert _parts(ex) == (Q, GOLD, GOT, [("Tomas", TURN)])
    assert ex.context == READ and not ex.items


def test_a_numbered_thread_of_posts():
    """'2/5' numbers a post (no value); a pointing-down icon ends a line introducing what follows; a line ending in a
    colon that names the speaker ('..., from Tomas:') and the quoted line under it are one line."""
    text = (f"1/5 weird recall bug today 🤔\nquestion: {Q}\nthe bot: {GOT}\ncorrect one: {GOLD}\n\n"
            f"2/5 here's the message it had, from Tomas:\n\"{TURN}\"\n\n"
            f"3/5 and here's what it kept instead 👇\n– {KEPT[0]}\n– {KEPT[1]}\n\n4/5 more soon 🙏")
    ex = _one(text)
    assert _parts(ex) == (Q, GOLD, GOT, [("Tomas", TURN)])
    assert ex.items == KEPT


def test_a_formal_report_with_bracketed_titles_and_circled_numbers():
    """'【Title】text' is a label and its text; '①A ②B' lists A and B; a label word over the writers' own 'we'
    ('Remarks: We humbly note ...') is no speaker."""
    text = (f"【Matter】「{Q}」\n【Proper Reply】{GOLD}\n【Reply Issued】{GOT}\n"
            "【Remarks】We humbly note that the stored entries were not used.\n"
            f"【Utterance】Tomas：「{TURN}」\n【Entries Retrieved】①{READ[0]} ②{READ[1]}\n"
            "【Measures】We deeply regret the trouble caused.")
    ex = _one(text)
    assert (ex.question, ex.gold, ex.answer, ex.turns[0]) == (Q, GOLD, GOT, ("Tomas", TURN))
    assert {who for who, _ in ex.turns} <= {"Tomas", None} and ex.context == READ


def test_a_quoted_turn_under_an_excerpt_and_a_sentence_about_the_facts_in_french():
    """'Extrait de la conversation' (an excerpt, though the word also means 'extracted'): a speaker and their words in
    quotes under it are a turn, not a stored item; a sentence about the facts ('Aucun des faits ...') is no memory."""
    text = (f"Question posée : « {Q} »\nRéponse attendue : « {GOLD} »\nRéponse obtenue : « {GOT} »\n\n"
            f"Extrait de la conversation :\n  Tomas : « {TURN} »\n\nFaits produits par l'opération :\n"
            f"  – {KEPT[0]}\n  – {KEPT[1]}\n\nConstat : Aucun des faits retenus ne mentionne Tomas.")
    ex = _one(text)
    assert _parts(ex) == (Q, GOLD, GOT, [("Tomas", TURN)])
    assert ex.items == KEPT


def test_a_marked_script_addressed_to_the_system():
    """A teacher's marking: 'Item 3      0 / 1' is a mark, no value; told 'your answer', the system is 'you', so the
    'model answer' is the one to copy (the gold); 'you heard Tomas say "..."' is Tomas's turn."""
    text = (f"Item 3                                  0 / 1\nThe question set was: {Q}\nYour answer — \"{GOT}\"   ✗\n"
            f"Model answer — \"{GOLD}\"\nWorking shown:\n  ✓ you heard Tomas say \"{TURN}\"\n"
            f"  ✎ you wrote down: {KEPT[0]}")
    ex = _one(text)
    assert _parts(ex) == (Q, GOLD, GOT, [("Tomas", TURN)])


def test_protobuf_blocks_beside_the_record_fields():
    """Brace blocks among a record's own fields ('query: ...' then 'verdict { ... }' then 'turn { ... }') are fields
    of it: a block's note is no one's words beside the next block's speaker."""
    text = (f'query: "{Q}"\nright: "{GOLD}"\nbot_said: "{GOT}"\nverdict {{\n  kind: UPDATE_ERROR\n'
            '  why: "the store dropped what was said"\n}\nturn {\n  speaker: "Tomas"\n'
            f'  text: "{TURN}"\n}}\nkept_fact: "{KEPT[0]}"')
    ex = _one(text)
    assert _parts(ex) == (Q, GOLD, GOT, [("Tomas", TURN)])


def test_a_task_tracker_with_properties_checkboxes_and_a_value_ending_a_sentence():
    """Property rows aligned with spaces are labelled lines ('Status      Open': no value of the case); '- [ ] X' is
    an item X; 'should be choir.' names a value though a full stop ends the sentence."""
    text = (f"TASK-88  Recall miss: \"{Q}\"\n\nStatus      Open\nPriority    Low\n\n### Details\n"
            f"Asked _{Q}_ → we came back with **{GOT}**; should be **altos**.\n\nSource turn:\n> **Tomas:** {TURN}\n\n"
            f"What the step wrote:\n- [ ] {KEPT[0]}\n- [x] {KEPT[1]}")
    ex = _one(text)
    assert _parts(ex) == (Q, "altos", GOT, [("Tomas", TURN)])
    assert ex.items == KEPT


def test_a_lab_notebook_entry():
    """'Tomas said — words' is Tomas's turn; '(ii) X' lines are items under their label; a note that Tomas 'is the
    speaker' is about the case, no memory; nor is a Dutch sentence about a fact ('Geen enkel feit ...')."""
    text = (f"Aim: find out why the bot said \"{GOT}\" when asked \"{Q}\".\nInput (from log):\n"
            f"    Tomas said — {TURN}\nComponent output recorded:\n    (i) {KEPT[0]}\n    (ii) {KEPT[1]}\n"
            f"Expected {GOLD}; got {GOT}.\nNote: no output fact names Tomas; Tomas is the speaker.\n"
            "Bevinding: Geen enkel feit noemt Tomas.")
    ex = _one(text)
    assert _parts(ex) == (Q, GOLD, GOT, [("Tomas", TURN)])
    assert ex.items == KEPT


OLD, NEW = "Tomas sings with Harbour Voices", "Tomas joined a rowing club"


def test_what_replaced_what_and_what_went_in_other_words():
    """'X was sitting in memory until Y overwrote it' (the verb last, its object a pronoun): X is the old memory;
    'Y stomped on X'; a sentence in angle brackets is a quote ('<X> -> overwritten by <Y>', inside a string
    literal); 'X vanished from memory', 'X was purged' and 'Observed X removed from the store' (after a word that
    elsewhere names the answer) remove X, whatever a label's side says."""
    asked = f"query: {Q}\nexpected: {GOLD}\nbot said: {GOT}\n"
    for note in (f"“{OLD}” was sitting in memory until “{NEW}” overwrote it.",
                 f"The write of `{NEW}` stomped on `{OLD}`.", f'note: "<{OLD}> -> overwritten by <{NEW}>; no clash"'):
        assert _one(asked + note).replaced == [(OLD, NEW)], note
    for note in (f"“{OLD}” vanished from memory at this step.", f"Result → '{OLD}' was purged for no reason.",
                 f"Tester notes: Observed '{OLD}' removed from the store."):
        ex = _one(asked + note)
        assert ex.removed == [OLD] and not ex.items and not ex.after, note
