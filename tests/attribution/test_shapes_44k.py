"""Shapes of a seventh author's systems: a rolling notes buffer that condenses turns and drops the raw turns it
covered (a marker whose category names a delete); layered profiles with promotion and a patch; a search whose
rerank demotes an item a fixed cut then drops; per-message adds where the assistant's own turn is a source; a
sufficiency check that stops retrieval early; tool calls that replace a span of a memory block."""

from __future__ import annotations

from .shapes import Smartcomment, blame_smartcomment

SERIAL = "What is the serial number of my VPN token?"


def _helpdesk(*, condensed_serial: bool = False) -> tuple[dict, dict]:
    """An IT helpdesk chat kept as a rolling notes buffer: ``notes.condense`` writes the notes from the raw turns
    (the first time) or folds new turns into them; ``window.release`` drops each raw turn the notes covered (an
    edge into a marker whose category says ``deleted``); ``window.shrink`` drops the token-serial turn before any
    condense read it, unless ``condensed_serial`` (then the condense read it and left it out)."""
    g = Smartcomment("helpdesk")
    g.session("monday", date="2024-02-05")
    ops: dict[str, str] = {}
    t1 = g.turn("h1", "Mara", "My laptop is a ThinkPad T14 running Fedora.")
    t2 = g.turn("h2", "Desk", "Thanks, noted the model.")
    t3 = g.turn("h3", "Mara", "The VPN token I was issued has serial 88213-K.")
    covered = [t1, t2, t3] if condensed_serial else [t1, t2]
    ops["condense"] = g.op("notes.condense", "condense")
    notes = g.var("notes", "Mara uses a ThinkPad T14 with Fedora.", cls="buffer", cat="rolling_notes")
    g.edges(covered, notes)
    for turn in covered:
        g.op("window.release", "release")
        g.edges(turn, g.var("gone", "purged", cat="deleted"))
    if not condensed_serial:
        ops["shrink"] = g.op("window.shrink", "budget")
        g.edges(t3, g.var("gone", "purged", cat="deleted"))
    g.session("tuesday", date="2024-02-06")
    t4 = g.turn("h4", "Mara", "Also my monitor flickers on the dock.")
    ops["fold"] = g.op("notes.condense", "condense")
    folded = g.var("notes", "Mara uses a ThinkPad T14 with Fedora. Monitor flickers on the dock.", cls="buffer",
                   cat="rolling_notes")
    g.edges([notes, t4], folded)
    g.op("window.release", "release")
    g.edges(t4, g.var("gone", "purged", cat="deleted"))
    g.session("ask", date="2024-02-09")
    question = g.question("ask-1", SERIAL)
    prediction = g.answer("ask-1", [question, folded], "I have no record of your VPN token serial.",
                          name="desk.reply", category="reply")
    g.judge(question, "88213-K", prediction)
    return g.document(), ops


def test_a_turn_dropped_before_any_summary_covered_it_is_a_deletion():
    """A raw turn dropped from the buffer (an edge into a marker whose category says deleted) before any condense
    read it: the drop is a DeletionError (was: an ExtractionError of the drop, typed by what it read)."""
    doc, ops = _helpdesk()
    assert blame_smartcomment(doc, SERIAL, "88213-K", ("h3",)) == ("DeletionError", ops["shrink"])


def test_a_turn_dropped_after_a_summary_left_it_out_is_the_summary_s_loss():
    """The condense read the turn and wrote notes without the serial; the turn's later release is legitimate (the
    notes stood for it): the condense is blamed, an ExtractionError."""
    doc, ops = _helpdesk(condensed_serial=True)
    assert blame_smartcomment(doc, SERIAL, "88213-K", ("h3",)) == ("ExtractionError", ops["condense"])


MEAL = "Should the airline meal you book for me be vegan?"


def _traveller() -> tuple[dict, dict]:
    """A travel agent's layered profile: a capture op writes a scratch note from each message, a promote op copies
    it into the long-term profile (a record of short fields, one of them a list of diets), and a revise op later
    rewrites the profile from another note: it empties the diet list and adds a remark."""
    g = Smartcomment("travel")
    g.session("booking", date="2024-09-02")
    ops: dict[str, str] = {}
    profile = g.var("profile", {"traveller": "Ola", "home_airport": "OSL", "diet": []}, cls="longterm",
                    cat="profile_record")
    m1 = g.turn("m1", "Ola", "My diet is strictly vegan, please remember that for every flight.")
    ops["capture"] = g.op("tier.capture", "capture")
    note = g.var("n1", "diet: vegan (strict)", cls="scratch", cat="scratch_note")
    g.edges(m1, note)
    ops["promote"] = g.op("tier.promote", "promote")
    promoted = g.var("profile", {"traveller": "Ola", "home_airport": "OSL", "diet": ["vegan"]}, cls="longterm",
                     cat="profile_record")
    g.edges([profile, note], promoted)
    m2 = g.turn("m2", "Ola", "The fish tacos at the airport looked great, my partner loved them.")
    g.op("tier.capture", "capture")
    note2 = g.var("n2", "partner enjoyed fish tacos", cls="scratch", cat="scratch_note")
    g.edges(m2, note2)
    ops["revise"] = g.op("tier.revise", "revise")
    revised = g.var("profile", {"traveller": "Ola", "home_airport": "OSL", "diet": [],
                                "remarks": "eats fish tacos, no diet restrictions"}, cls="longterm",
                    cat="profile_record")
    g.edges([promoted, note2], revised)
    g.session("next trip", date="2024-10-01")
    question = g.question("t-1", MEAL)
    prediction = g.answer("t-1", [question, revised], "No, you have no diet restrictions on file.",
                          name="agent.reply", category="reply")
    g.judge(question, "Yes - your diet is vegan.", prediction)
    return g.document(), ops


def test_a_revise_that_empties_a_profile_list_is_the_update_not_the_promotion():
    """The promotion copied the diet into the profile's ``diet`` list (read as "diet vegan"); the revise that
    emptied the list while writing a remark rewrote the record: an UpdateError of the revise (was: the promotion,
    the list's key not read; then a DeletionError, the record read as a list store)."""
    doc, ops = _traveller()
    assert blame_smartcomment(doc, MEAL, "Yes - your diet is vegan.", ("m1",)) == ("UpdateError", ops["revise"])


PIECE = "Which piece did my teacher assign for the spring recital?"


def _tutor() -> tuple[dict, dict]:
    """A music tutor's memory in two tiers (class ``tier_fast`` and ``tier_deep``): a ``planner.choose`` op of the
    question writes which tiers to read (``{"tiers": [...]}``), a ``gather`` op reads the units of those tiers;
    the assignment sits in the deep tier, which an earlier question's plan named and the last plan leaves out."""
    g = Smartcomment("tutor")
    g.session("lesson", date="2025-03-03")
    ops: dict[str, str] = {}
    t1 = g.turn("L1", "Noor", "I practise scales for twenty minutes every morning.")
    t2 = g.turn("L2", "Noor", "My teacher assigned the Chopin Nocturne in E-flat for the spring recital.")
    g.op("tiers.write", "write")
    fast = g.var("habits", "Noor practises scales twenty minutes each morning", cls="tier_fast", cat="tier_entry")
    g.edges(t1, fast)
    deep = g.var("recital", "Spring recital piece: Chopin Nocturne in E-flat (assigned by teacher)", cls="tier_deep",
                 cat="tier_entry")
    g.edges(t2, deep)
    g.session("check-in", date="2025-03-20")
    first = g.question("r-0", "What do I practise every morning?")
    g.op("planner.choose", "plan")
    both = g.var("r-0.plan", {"tiers": ["tier_fast", "tier_deep"]}, cls="plan", cat="tier_plan")
    g.edges(first, both)
    g.op("tiers.gather", "gather")
    gathered = g.var("r-0.ctx", [fast, deep], cls="gathered", cat="memory_context")
    g.edges([both, fast, deep], gathered)
    said = g.answer("r-0", [first, gathered], "Scales, twenty minutes.", name="tutor.reply", category="reply")
    g.judge(first, "Scales for twenty minutes", said, right=True)
    g.session("later", date="2025-04-10")
    question = g.question("r-1", PIECE)
    ops["plan"] = g.op("planner.choose", "plan")
    plan = g.var("r-1.plan", {"tiers": ["tier_fast"]}, cls="plan", cat="tier_plan")
    g.edges(question, plan)
    ops["gather"] = g.op("tiers.gather", "gather")
    context = g.var("r-1.ctx", [fast], cls="gathered", cat="memory_context")
    g.edges([plan, fast], context)
    prediction = g.answer("r-1", [question, context], "You have not told me about a recital piece.",
                          name="tutor.reply", category="reply")
    g.judge(question, "Chopin Nocturne in E-flat", prediction)
    return g.document(), ops


def test_a_plan_that_leaves_out_the_tier_holding_the_fact_is_the_retrieval_loss():
    """The gather op read faithfully the tier it was sent to; the planner's choice of tiers left out the one whose
    unit held the piece: the planner is blamed (was: the gather)."""
    doc, ops = _tutor()
    assert blame_smartcomment(doc, PIECE, "Chopin Nocturne in E-flat", ("L2",)) == ("RetrievalError", ops["plan"])


LEASH = "What colour is the harness of the cat that sleeps on Milo's windowsill?"


def _shelter() -> tuple[dict, dict]:
    """An agentic search over notes: round one (``idx.lookup``, category ``lookup``) ranks the notes; a check
    (``agent.enough``, category ``judge_context``) reads the ranking and writes ``{"enough": true}``, so no second
    round runs, although the note holding the harness colour was not among the hits."""
    g = Smartcomment("shelter")
    g.session("week1", date="2025-01-06")
    ops: dict[str, str] = {}
    t1 = g.turn("w1", "Ilse", "We took in a tabby called Fig; she wears a bright orange harness.")
    t2 = g.turn("w2", "Ilse", "Our cat now naps every afternoon on Milo's windowsill.")
    g.op("notes.write", "note_write")
    n1 = g.var("note-1", "Ilse's tabby Fig wears a bright orange harness", cls="note", cat="note_entry")
    g.edges(t1, n1)
    n2 = g.var("note-2", "Ilse's cat naps on Milo's windowsill in the afternoon", cls="note", cat="note_entry")
    g.edges(t2, n2)
    g.session("ask", date="2025-02-01")
    question = g.question("c-1", LEASH)
    ops["lookup"] = g.op("idx.lookup", "lookup")
    ranked = g.var("c-1.hits", ["note:note-2@1"], cls="hits", cat="ranking")
    g.edges([question, n2], ranked)
    ops["check"] = g.op("agent.enough", "judge_context")
    verdict = g.var("c-1.check", {"enough": True, "gaps": []}, cls="check", cat="agent_check")
    g.edges([question, ranked], verdict)
    prediction = g.answer("c-1", [question, ranked, verdict], "The notes do not say what harness the cat wears.",
                          name="agent.reply", category="reply")
    g.judge(question, "Bright orange", prediction)
    return g.document(), ops


def test_a_check_that_says_enough_while_a_piece_is_missing_stopped_retrieval():
    """A multi-hop question's first round missed the harness note (it shares no words with the question); the
    check that judged the hits enough, so no second round ran, is blamed (was: the lookup)."""
    doc, ops = _shelter()
    assert blame_smartcomment(doc, LEASH, "Bright orange", ("w1", "w2")) == ("RetrievalError", ops["check"])


SHOT = "When is Biscuit's vaccination appointment?"


def _petcare(*, other_fact: bool = False) -> tuple[dict, dict]:
    """Per-message adds (a pet-care assistant): each message, the user's and the assistant's, goes through
    ``facts.pull`` (category ``pull``, reading the message and the one before it) and ``store.reconcile`` (category
    ``reconcile``) which rewrites a unit from the facts. The assistant misstates the date; ``facts.pull`` turns the
    assistant's claim into a fact; the reconcile applies it to the unit word for word. With ``other_fact`` the
    assistant's message is right, and a later user message's true fact (a dental check) is put over the unit."""
    g = Smartcomment("pets")
    g.session("s1", date="2025-04-01")
    ops: dict[str, str] = {}
    u1 = g.turn("P1", "owner", "Biscuit's vaccination appointment is on May 3 at the vet on Elm Street.")
    g.op("facts.pull", "pull")
    f1 = g.var("pulled", {"facts": ["Dog Biscuit has a vaccination appointment on May 3"]}, cls="llm", cat="facts")
    g.edges(u1, f1)
    g.op("store.reconcile", "reconcile")
    unit = g.var("u1", "Dog Biscuit has a vaccination appointment on May 3", cls="unit", cat="memory_unit")
    g.edges(f1, unit)
    a1 = g.turn("P2", "assistant", "Noted, I will remind you the day before." if other_fact else
                "Noted: Biscuit's vaccination appointment on May 13.")
    said = "Biscuit needs a dental check on June 2" if other_fact else "Biscuit's vaccination appointment is on May 13"
    if other_fact:
        u2 = g.turn("P3", "owner", "Biscuit needs a dental check on June 2 as well.")
    ops["pull"] = g.op("facts.pull", "pull")
    f2 = g.var("pulled", {"facts": [said]}, cls="llm", cat="facts")
    g.edges([a1, u2] if other_fact else [u1, a1], f2)
    ops["reconcile"] = g.op("store.reconcile", "reconcile")
    changed = g.var("u1", f"Dog {said}", cls="unit", cat="memory_unit")
    g.edges([f2, unit], changed)
    g.session("s2", date="2025-04-20")
    question = g.question("v-1", SHOT)
    g.op("store.search", "search")
    hits = g.var("v-1.hits", f"- Dog {said}", cls="hits", cat="memory_context")
    g.edges([question, changed], hits)
    prediction = g.answer("v-1", [question, hits], "It is on May 13.", name="pets.reply", category="reply")
    g.judge(question, "May 3", prediction)
    return g.document(), ops


def test_an_overwrite_that_applies_an_extracted_fact_word_for_word_blames_the_extraction():
    """The reconcile rewrote the unit with nothing but the old unit's and the new fact's words: it applied the
    fact faithfully; the fact taken from the assistant's misstatement is the loss, an ExtractionError of the pull
    (was: an UpdateError of the reconcile)."""
    doc, ops = _petcare()
    assert blame_smartcomment(doc, SHOT, "May 3", ("P1",)) == ("ExtractionError", ops["pull"])


def test_a_true_fact_of_another_turn_put_over_a_unit_is_the_update():
    """The pull that wrote the dental check never read the vaccination turn: its fact is true, and putting it over
    the vaccination unit was the reconcile's choice, an UpdateError."""
    doc, ops = _petcare(other_fact=True)
    assert blame_smartcomment(doc, SHOT, "May 3", ("P1",)) == ("UpdateError", ops["reconcile"])


VENUE = "Where does our book club meet now?"


def _bookclub(*, via_fact: bool = False) -> tuple[dict, dict]:
    """A running summary folded session by session (``digest.fold``, category ``fold``): the second fold read the
    turn moving the club to another venue (with ``via_fact``, a note ``notes.take`` wrote from it) and noted the new
    venue, but kept the old sentence saying where the club meets; with ``via_fact`` a third fold of an unrelated
    turn keeps it too. The answer followed that sentence."""
    g = Smartcomment("club")
    g.session("s1", date="2024-09-03")
    ops: dict[str, str] = {}
    t1 = g.turn("B1", "Ada", "Our book club meets at the Greenway Library every second Tuesday.")
    ops["first"] = g.op("digest.fold", "fold")
    first = g.var("digest", "The book club meets at the Greenway Library every second Tuesday.", cls="summary",
                  cat="running_digest")
    g.edges(t1, first)
    g.session("s2", date="2024-10-08")
    t2 = g.turn("B2", "Ada", "From now on we gather at the Orchard Cafe instead, the library closed for works.")
    change = t2
    if via_fact:
        g.op("notes.take", "note")
        change = g.var("note", {"notes": ["Club gathers at the Orchard Cafe from now on"]}, cls="llm", cat="notes")
        g.edges(t2, change)
    ops["fold"] = g.op("digest.fold", "fold")
    folded = g.var("digest", "The book club meets at the Greenway Library every second Tuesday. Orchard Cafe "
                   "mentioned for gatherings.", cls="summary", cat="running_digest")
    g.edges([first, change], folded)
    if via_fact:
        t3 = g.turn("B3", "Ada", "Next month we read a novel by Olga Tokarczuk.")
        g.op("digest.fold", "fold")
        later = g.var("digest", "The book club meets at the Greenway Library every second Tuesday. Orchard Cafe "
                      "mentioned for gatherings. Next read: a Tokarczuk novel.", cls="summary", cat="running_digest")
        g.edges([folded, t3], later)
        folded = later
    g.session("s3", date="2024-11-02")
    question = g.question("k-1", VENUE)
    prediction = g.answer("k-1", [question, folded], "Your book club meets at the Greenway Library.",
                          name="club.reply", category="reply")
    g.judge(question, "Orchard Cafe", prediction)
    return g.document(), ops


def test_a_fold_that_saw_the_change_and_kept_the_old_statement_is_the_update():
    """The context names the new venue, but the fold that read the change kept the sentence the answer followed:
    an UpdateError of that fold (was: a ResponseError, the context 'holding' the venue's words)."""
    doc, ops = _bookclub()
    assert blame_smartcomment(doc, VENUE, "Orchard Cafe", ("B2",)) == ("UpdateError", ops["fold"])


def test_the_fold_that_read_a_note_of_the_change_kept_the_old_statement():
    """The fold read a note taken from the venue turn (not the turn), and a later fold of an unrelated turn kept
    the old sentence too: the fold that read the change is blamed."""
    doc, ops = _bookclub(via_fact=True)
    assert blame_smartcomment(doc, VENUE, "Orchard Cafe", ("B2",)) == ("UpdateError", ops["fold"])


PLOT = "Where is my allotment now?"
PLOT_GOLD = "At Ashton Court in Bristol (an allotment plot)"


def _allotment() -> tuple[dict, dict]:
    """A tool-calling gardening agent: a memory block seeded at setup (no op wrote its first version), rewritten by
    ``blocks.swap_text`` (replace one span) and ``blocks.add_line`` tool calls. The swap changed the city only and
    kept the old garden; the answer followed it."""
    g = Smartcomment("garden")
    g.session("setup", date="2025-02-01")
    ops: dict[str, str] = {}
    block = g.var("grower", "Grower: Idris. Allotment plot at Riverside Gardens, Leeds.", cls="core",
                  cat="memory_block")
    g.session("chat", date="2025-03-10")
    m1 = g.var("c1", {"role": "user", "content": "We moved to Bristol, and I now have an allotment plot at Ashton "
                                                 "Court."}, cls="chat", cat="chat_message")
    ops["swap"] = g.op("blocks.swap_text", "block_edit", arguments={"old": "Leeds", "new": "Bristol"})
    block2 = g.var("grower", "Grower: Idris. Allotment plot at Riverside Gardens, Bristol.", cls="core",
                   cat="memory_block")
    g.edges([m1, block], block2)
    m2 = g.var("c2", {"role": "user", "content": "My broad beans are up already."}, cls="chat", cat="chat_message")
    g.op("blocks.add_line", "block_edit", arguments={"line": "Broad beans sprouted in March."})
    block3 = g.var("grower", "Grower: Idris. Allotment plot at Riverside Gardens, Bristol. Broad beans sprouted "
                   "in March.", cls="core", cat="memory_block")
    g.edges([m2, block2], block3)
    g.session("ask", date="2025-04-02")
    question = g.question("g-1", PLOT)
    prediction = g.answer("g-1", [question, block3], "Your allotment is at Riverside Gardens in Bristol.",
                          name="agent.send_message", category="reply")
    g.judge(question, PLOT_GOLD, prediction)
    return g.document(), ops


def test_a_span_replace_that_kept_the_old_garden_in_a_seeded_block_is_the_update():
    """The block's first version, which no op wrote, is the block (not a message); the swap that read the move and
    kept "Riverside Gardens" is an UpdateError (was: a ResponseError, the block read as a turn)."""
    doc, ops = _allotment()
    assert blame_smartcomment(doc, PLOT, PLOT_GOLD, ("c1",)) == ("UpdateError", ops["swap"])


REBOOK = "Which flight did the airline agent rebook me onto?"


def _travel_inbox() -> tuple[dict, dict]:
    """Retrieve, rerank, cut: the search found the agent's chat (ranked second), the cross-encoder ranked it
    fourth, behind a newsletter and a boarding pass, and a fixed top-3 cut left it out. The boarding pass states the
    same flight number, so the context holds the gold's words, from the wrong message."""
    g = Smartcomment("inbox")
    g.session("mails", date="2024-08-01")
    ops: dict[str, str] = {}
    docs = {
        "e1": "Chat with the airline: the agent confirmed my rebooking onto LH 2041 after the cancellation.",
        "e2": "Boarding pass: LH 2041 Frankfurt to Oslo, seat 14C, 2 August.",
        "e3": "Newsletter: fly to Oslo from 59 EUR this autumn, rebook for free.",
        "e4": "Receipt: airport parking, 3 days, 36 EUR.",
    }
    mails = {k: g.turn(k, "mailbox", text) for k, text in docs.items()}
    g.op("rag.split", "chunking")
    chunks = {k: g.var(f"{k}_c0", text, cls="chunk", cat="chunk") for k, text in docs.items()}
    for k in docs:
        g.edges(mails[k], chunks[k])
    g.session("ask", date="2024-08-05")
    question = g.question("f-1", REBOOK)
    g.op("rag.search", "search")
    found = g.var("f-1.hits", [{"chunk": chunks[k], "score": s} for k, s in
                               (("e3", 0.74), ("e1", 0.73), ("e2", 0.70), ("e4", 0.2))], cls="hits", cat="candidates")
    g.edges([question, *chunks.values()], found)
    ops["rerank"] = g.op("rag.cross_encode", "rerank")
    ranked = g.var("f-1.ranked", [{"chunk": chunks[k], "ce": s} for k, s in
                                  (("e3", 7.1), ("e2", 6.4), ("e4", 3.0), ("e1", 2.9))], cls="hits", cat="candidates")
    g.edges([question, found], ranked)
    ops["cut"] = g.op("rag.top_n", "truncate")
    kept = ["e3", "e2", "e4"]
    context = g.var("f-1.ctx", "\n".join(f"[{i}] {docs[k]}" for i, k in enumerate(kept, 1)), cls="ctx",
                    cat="memory_context")
    g.edges([ranked, *(chunks[k] for k in kept)], context)
    prediction = g.answer("f-1", [question, context], "No rebooking is mentioned in your mails.",
                          name="rag.generate", category="generation")
    g.judge(question, "LH 2041", prediction)
    return g.document(), ops


def test_a_rerank_that_demoted_the_evidence_below_a_cut_is_the_retrieval_loss_though_words_match():
    """The context states "LH 2041" only through the boarding pass, not the evidence; the evidence's chunk was found
    and the rerank demoted it below the fixed cut: a RetrievalError of the rerank (was: a ResponseError)."""
    doc, ops = _travel_inbox()
    assert blame_smartcomment(doc, REBOOK, "LH 2041", ("e1",)) == ("RetrievalError", ops["rerank"])
