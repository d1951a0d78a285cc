"""SimLM's reflection reads feedback in more families of layout (issue 47k): tab-separated sheets with a number column,
LaTeX tabulars, Mermaid sequence diagrams, IRC logs, Jira tables, a label holding a quote, terse 'want X / have Y'
pairs, examples whose question comes after their evidence, and a chain of 'why' questions. One construction per
mechanism, worded here (people, values and labels of our own); each names the parts a person reads in it."""

from __future__ import annotations

from memopt.simlm.examples import read_feedback

Q, GOLD, GOT = "Which bakery does Priya buy sourdough from?", "Juniper Loaf", "Bramble Bakehouse"
TURN = "I get my sourdough from Juniper Loaf every Saturday morning."
KEPT = ["Priya adopted a greyhound called Pip", "Priya is learning the cello"]
READ = ["[2 March 2024] Priya tried a croissant at Bramble Bakehouse", "[9 March 2024] Priya buys bread on Saturdays"]
Q2, GOLD2, GOT2 = "Where did Oskar spend his honeymoon?", "Lisbon", "Porto"
TURN2 = "We spent our honeymoon in Lisbon and loved the trams."


def _one(text: str):
    [example] = read_feedback(text).examples
    return example


def _parts(ex) -> tuple:
    return ex.question, ex.gold, ex.answer, ex.turns


def test_a_tab_separated_sheet_whose_first_column_is_a_number_sign():
    """A header cell '#' (the row number) is no wiki list marker: the sheet is still a table of rows."""
    header = "#\tQuestion\tShould be\tModel said\tSpeaker\tUtterance\tKept\tComment"
    row = f"7\t{Q}\t{GOLD}\t{GOT}\tPriya\t{TURN}\t{KEPT[0]}; {KEPT[1]}\tthe bakery is gone from memory"
    ex = _one(f"{header}\n{row}")
    assert _parts(ex) == (Q, GOLD, GOT, [("Priya", TURN)])
    assert ex.items == KEPT


def test_a_latex_tabular_of_labels_and_values():
    """'&' separates a row's cells, '\\\\' ends it; rules, \\textbf / \\emph / \\texttt and \\newline are markup: a
    two-column tabular of labels and values is one record."""
    text = ("\\begin{tabular}{p{3cm}p{9cm}}\n\\hline\n\\multicolumn{2}{c}{\\textbf{Recall miss} at \\texttt{kb.store}}"
            " \\\\\n\\hline\n"
            f"Question & {Q} \\\\\nShould be & {GOLD} \\\\\nModel said & \\emph{{{GOT}}} \\\\\n"
            f"Utterance (Priya) & {TURN} \\\\\nKept & {KEPT[0]} \\newline {KEPT[1]} \\\\\n\\hline\n\\end{{tabular}}")
    ex = _one(text)
    assert _parts(ex) == (Q, GOLD, GOT, [("Priya", TURN)])
    assert ex.items == KEPT


def test_a_latex_tabular_with_a_header_row():
    """A tabular of several columns under a header row (a rule below it) is a table: one example per row."""
    text = ("\\begin{tabular}{lllll}\n\\toprule\nQuestion & Right answer & Prediction & Speaker & Utterance \\\\\n"
            f"\\midrule\n{Q} & {GOLD} & {GOT} & Priya & {TURN} \\\\\n{Q2} & {GOLD2} & {GOT2} & Oskar & {TURN2} \\\\\n"
            "\\bottomrule\n\\end{tabular}")
    first, second = read_feedback(text).examples
    assert _parts(first) == (Q, GOLD, GOT, [("Priya", TURN)])
    assert _parts(second) == (Q2, GOLD2, GOT2, [("Oskar", TURN2)])


def test_a_mermaid_sequence_diagram():
    """'A->>B: text' is A's message (a participant's alias read as its name); a participant's message to itself is
    what it did; the reply to the one who asked the question is the answer; a note is a line of its own."""
    text = ("```mermaid\nsequenceDiagram\n    %% recall miss in kb.store\n    participant P as Priya\n"
            "    participant K as kb.store\n    actor A as Analyst\n"
            f"    P->>K: {TURN}\n    K->>K: stored {KEPT[0]}\n    K->>K: stored {KEPT[1]}\n"
            f"    A->>+K: {Q}\n    K-->>-A: {GOT}\n    Note left of A: the right answer is {GOLD}\n```")
    ex = _one(text)
    assert _parts(ex) == (Q, GOLD, GOT, [("Priya", TURN)])
    assert ex.items == KEPT


def test_an_irc_log():
    """'[hh:mm] <nick> text': the time and the handle of the people discussing the case go, their lines are prose."""
    text = (f"[09:14] <dana> kb.store is acting up again\n[09:15] <kim> yes, on \"{Q}\"\n"
            f"[09:15] <kim> expected {GOLD}, got {GOT}\n[09:16] <kim> source is Priya: {TURN}\n"
            f"[09:17] <dana> ack")
    ex = _one(text)
    assert _parts(ex) == (Q, GOLD, GOT, [("Priya", TURN)])


def test_a_jira_table_and_a_bold_speaker():
    """'||Key||Value||' heads a Jira table and '|a|b|' are its rows; '*Priya*:' (bold before a colon) is a label."""
    text = ("h2. Recall miss\n||Key||Value||\n"
            f"|Question|{Q}|\n|Should be|{GOLD}|\n|Model said|{GOT}|\n|Stage|{{{{kb.store}}}}|\n"
            f"h3. Transcript\n{{quote}}\n*Priya*: {TURN}\n{{quote}}")
    ex = _one(text)
    assert _parts(ex) == (Q, GOLD, GOT, [("Priya", TURN)])


def test_a_bold_name_before_a_colon_in_a_line_is_a_speaker():
    """'source line, *Priya*: "..."': an emphasised name before a colon names who said the quote."""
    ex = _one(f"> {Q}\nexpected *{GOLD}*, bot said *{GOT}* :weary:\nsource line, *Priya*: \"{TURN}\"")  # an emoji
    assert _parts(ex) == (Q, GOLD, GOT, [("Priya", TURN)])


def test_a_label_that_holds_a_quote_is_no_label():
    """'Should have said 'X': the reason' is a sentence naming the value X, not a label 'Should have said X'."""
    ex = _one(f"Case: \"{Q}\"\nShould have said '{GOLD}': the turn names it.\nIt answered '{GOT}'.")
    assert (ex.question, ex.gold, ex.answer) == (Q, GOLD, GOT)


def test_terse_parallel_parts_take_the_other_role():
    """'want X / have Y': of two parallel parts, each a lead word and a value, the one beside the gold's is the
    system's answer."""
    ex = _one(f"repro \"{Q}\"\nwant {GOLD} / have {GOT}\n  > Priya: {TURN}")
    assert _parts(ex) == (Q, GOLD, GOT, [("Priya", TURN)])
    many = "rye, spelt, a baguette from the station kiosk, two croissants, a cinnamon bun"  # a long list
    ex = _one(f"repro \"{Q}\"\nwant sourdough, rye / have {many}\n  > Priya: {TURN}")
    assert (ex.gold, ex.answer) == ("sourdough, rye", many)


def test_examples_whose_question_comes_after_their_evidence():
    """Each example opens with a paragraph like the one the first opens with (a review's header): the paragraphs from
    it to the question are that example's, not the one before."""
    def comment(stage: str, turn: tuple[str, str], q: str, gold: str, got: str) -> str:
        return (f"**`{stage}`** · Needs work\n\n> {turn[0]}: {turn[1]}\n\n"
                f"Asking \"{q}\" gives `{got}` where `{gold}` was expected.")
    text = "\n\n".join([comment("kb.store", ("Priya", TURN), Q, GOLD, GOT),
                        comment("kb.store", ("Oskar", TURN2), Q2, GOLD2, GOT2)])
    first, second = read_feedback(text).examples
    assert _parts(first) == (Q, GOLD, GOT, [("Priya", TURN)])
    assert _parts(second) == (Q2, GOLD2, GOT2, [("Oskar", TURN2)])


def test_a_chain_of_whys_is_one_example():
    """'Why was the output wrong?', 'Why did the store drop it?': questions the writers ask about the case (naming
    no one) start no example."""
    text = (f"## Incident: \"{Q}\"\nImpact: the model said \"{GOT}\" while \"{GOLD}\" was right.\n"
            f"- Priya said \"{TURN}\"\n### Five whys\n1. Why was the output wrong? No stored fact names Priya.\n"
            "2. Why did the store miss the bakery? Because the extractor kept only hobbies.\n")
    ex = _one(text)
    assert _parts(ex) == (Q, GOLD, GOT, [("Priya", TURN)])


def test_a_letters_greeting_and_sign_off_are_no_answer():
    """'Hello team,' and 'Thanks,' over a signature are paragraphs of a letter, not values; a paragraph like the one
    the first example opens with opens the next."""
    def letter(q: str, gold: str, got: str, who: str, turn: str) -> str:
        return (f"Subject: recall miss in kb.store\n\nHello team,\n\nI am handing over one case from my shift.\n\n"
                f"Someone asked \"{q}\". The right answer is \"{gold}\".\n\n    {who}: {turn}\n\nThanks,\nNadia")
    text = "\n\n".join([letter(Q, GOLD, GOT, "Priya", TURN), letter(Q2, GOLD2, GOT2, "Oskar", TURN2)])
    first, second = read_feedback(text).examples
    assert (first.question, first.gold, first.answer) == (Q, GOLD, None)
    assert (second.question, second.gold, second.answer) == (Q2, GOLD2, None)


def test_a_comma_before_we_answer_starts_a_clause():
    """'expected A, B, C, we answer A': the list before the comma is the gold, what 'we answer' leads the answer."""
    ex = _one(f"on \"{Q}\": expected Juniper Loaf, Oven Lane, we answer {GOT}")
    assert (ex.gold, ex.answer) == ("Juniper Loaf, Oven Lane", GOT)


def test_an_answer_ends_where_a_phrasal_verb_starts_the_next_clause():
    """'the model gave only X and left out Y': the answer is X."""
    ex = _one(f"Asked: {Q}\nSummary: the model gave only {GOT} and left out {GOLD}.\nShould be: {GOLD}")
    assert (ex.question, ex.gold, ex.answer) == (Q, GOLD, GOT)


def test_two_sequence_diagrams_one_after_the_other():
    """Each 'sequenceDiagram' is a diagram of its own, one example each (a blank line between them ends a paragraph)."""
    def diagram(who: str, turn: str, q: str, got: str, gold: str) -> str:
        return (f"sequenceDiagram\n    participant W as {who}\n    participant S as kb.store\n    actor R as Reviewer\n"
                f"    W->>S: {turn}\n    R->>S: {q}\n    S-->>R: {got}\n    Note over R,S: should have been {gold}")
    first, second = read_feedback("\n\n".join([diagram("Priya", TURN, Q, GOT, GOLD),
                                               diagram("Oskar", TURN2, Q2, GOT2, GOLD2)])).examples
    assert _parts(first) == (Q, GOLD, GOT, [("Priya", TURN)])
    assert _parts(second) == (Q2, GOLD2, GOT2, [("Oskar", TURN2)])


def test_a_list_in_prose_over_a_line_with_as_many_commas_is_no_csv():
    """'should have been a, b c, d' over a sentence with as many commas: a list and a sentence, not a CSV header over
    its row (a column's name is a few words)."""
    text = (f"Asked: {Q}\nshould have been Juniper Loaf, Oven Lane, Crumb Corner\n"
            f"note: the gold answer lists 3 places, the model gave one, {GOT}")
    ex = _one(text)
    assert (ex.question, ex.gold) == (Q, "Juniper Loaf, Oven Lane, Crumb Corner")
    ex = _one(f"about \"{Q2}\"\nexpected Lisbon, we answer Porto, Faro\n"  # short cells, a space after each comma
              "source is Oskar: We spent our honeymoon in Lisbon, loved the trams, ate well")
    assert (ex.question, ex.gold, ex.answer) == (Q2, "Lisbon", "Porto, Faro")


def test_a_column_of_words_labelled_with_a_question_word_beside_the_speakers():
    """'Who spoke' beside 'What was said': the words are the speaker's turn, though 'What' opens the question too
    (a question word is no one's name)."""
    q = "What bread does Priya buy on Saturdays?"
    header = "Question\tRight answer\tModel answer\tWho spoke\tWhat was said\tKept"
    row = f"{q}\tsourdough\trye\tPriya\tSourdough from Juniper Loaf is our Saturday treat.\t{KEPT[0]}"
    ex = _one(f"{header}\n{row}")
    assert _parts(ex) == (q, "sourdough", "rye", [("Priya", "Sourdough from Juniper Loaf is our Saturday treat.")])
