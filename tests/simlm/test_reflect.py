"""SimLM as reflection LM: it reads the examples in the feedback, whatever their format, and fixes only
what the operation being rewritten could have lost; controls without a grounded signal get generic rewrites."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import dspy
import pytest

from memopt.lm import signatures as S
from memopt.simlm.directives import active_directives
from memopt.simlm.examples import read_feedback
from memopt.simlm.reflect import ADVICE_FOLLOW_RATE, operation_kind, propose, read_evidence

SEED = {"extract": "Extract the facts worth remembering about the user.",
        "update": "Decide ADD, UPDATE, DELETE or NONE for each new fact.",
        "answer": "Answer the question from the memories."}
OPERATION = {"extract": "mem0.extract: extracts the facts worth remembering from one session's turns",
             "update": "mem0.update: decides ADD, UPDATE, DELETE or NONE for new facts against similar memories",
             "answer": "mem0.answer: answers the question from the retrieved memories"}

# One example per loss, as plain data; `_prose`, `_json` and `_bullets` write the same content three ways.
SPEAKER = {"question": "What is the name of Luca's dog?",
           "turns": [("Luca", "We also got a dog last weekend, a little beagle named Nala.")],
           "held": ["Zane went to Greece on 1 December 2022", "Zane plays badminton every Tuesday"],
           "gold": "Nala", "answer": "Not mentioned"}
DATE_KEPT = {"question": "When did Zane go to Greece?",
             "turns": [("Zane", "I went to Greece yesterday, the highlight was the Acropolis.")],
             "held": ["Zane went to Greece yesterday, the highlight was the Acropolis"],
             "gold": "1 December 2022", "answer": "yesterday"}
OVERWRITTEN = {"question": "Where does Zane take rock climbing classes?",
               "turns": [("Zane", "I started rock climbing last weekend at the Arts Hub.")],
               "replaced": ("Zane started rock climbing at the Arts Hub", "Zane started a new job at Hartwell"),
               "gold": "Arts Hub", "answer": "Hartwell"}
DELETED = {"question": "Who does Gina play volleyball with?",
           "turns": [("Gina", "I play volleyball every Wednesday with my sister Wes.")],
           "removed": "Gina plays volleyball every Wednesday with her sister Wes",
           "gold": "Wes", "answer": "Not mentioned"}
ABSTAIN = {"question": "When did Luca go to Greece?",
           "turns": [("Zane", "I went to Greece yesterday, the highlight was the Acropolis.")],
           "gold": "Not mentioned", "answer": "yesterday"}
PARTIAL = {"question": "What are the names of Mia's cats?",
           "turns": [("Mia", "I have two cats, Max and Luna.")],
           "read": ["[3 May 2023] Mia has a cat named Max", "[9 May 2023] Mia has a cat named Luna"],
           "gold": "Max, Luna", "answer": "Max"}
EXTRACT_CASES = [SPEAKER, DATE_KEPT]
UPDATE_CASES = [OVERWRITTEN, DELETED]
ANSWER_CASES = [ABSTAIN, PARTIAL]


def _prose(cases: list[dict]) -> str:
    out = []
    for c in cases:
        s = [c["question"]] + [f'{who} said "{text}".' for who, text in c["turns"]]
        if c.get("held"):
            s.append("The memory kept " + " and ".join(f'"{h}"' for h in c["held"]) + ".")
        if c.get("replaced"):
            s.append(f'Later "{c["replaced"][0]}" was replaced by "{c["replaced"][1]}".')
        if c.get("removed"):
            s.append(f'Then "{c["removed"]}" was deleted.')
        if c.get("read"):
            s.append("The reply was written from " + " and ".join(f'"{r}"' for r in c["read"]) + ".")
        s.append(f'It should have been "{c["gold"]}", but the system said "{c["answer"]}".')
        out.append(" ".join(s))
    return "\n\n".join(out)


def _json(cases: list[dict]) -> str:
    out = []
    for c in cases:
        item = {"q": c["question"].rstrip("?"), "who": c["turns"][0][0], "words": c["turns"][0][1]}
        if c.get("held"):
            item["memory"] = c["held"]
        if c.get("replaced"):
            item["before"], item["after"] = c["replaced"]
        if c.get("removed"):
            item["gone"] = c["removed"]
        if c.get("read"):
            item["looked_up"] = c["read"]
        item["want"], item["have"] = c["gold"], c["answer"]
        out.append(item)
    return json.dumps({"cases": out}, indent=1)


def _bullets(cases: list[dict]) -> str:
    lines = []
    for c in cases:
        lines.append(f"- {c['question']}")
        lines += [f"  - {who}: {text}" for who, text in c["turns"]]
        if c.get("held"):
            lines.append("  - " + " | ".join(c["held"]))
        if c.get("replaced"):
            lines.append(f'  - "{c["replaced"][0]}" → "{c["replaced"][1]}"')
        if c.get("removed"):
            lines.append(f'  - "{c["removed"]}" (deleted)')
        if c.get("read"):
            lines.append("  - retrieved: " + " | ".join(c["read"]))
        lines += [f"  - {c['gold']}", f"  - {c['answer']}"]
    return "\n".join(lines)


def _themes(op: str, feedback: str) -> set[str]:
    return set(read_evidence(op, feedback).weights)


def _fix_rate(op: str, feedback: str, directive: str, seeds: int = 40, n: int = 4) -> float:
    """Share of candidates (over seeds) that add ``directive`` to the seed instruction."""
    hits = total = 0
    for seed in range(seeds):
        for candidate in propose({"operation": OPERATION[op], "current_instruction": SEED[op], "feedback": feedback,
                                  "n_candidates": n}, seed)["proposals"]:
            total += 1
            hits += directive in active_directives(op, candidate["prompt"]) - active_directives(op, SEED[op])
    return hits / total


@pytest.mark.parametrize(("op", "cases", "themes"), [
    ("extract", EXTRACT_CASES, {"all_participants", "resolve_dates"}),
    ("update", UPDATE_CASES, {"update_on_contradiction", "delete_only_explicit"}),
    ("answer", ANSWER_CASES, {"abstain", "combine_all"}),
])
def test_same_examples_in_three_formats_give_the_same_themes(op, cases, themes):
    for render in (_prose, _json, _bullets):
        assert _themes(op, render(cases)) == themes, (render.__name__, render(cases))


def test_labels_stripped_still_read_the_parts_of_an_example():
    """No 'Question:' / 'Gold:' / error names: the question ends with '?', the turn is 'Name: text', the gold is
    the phrase that answers a "when" question with a date."""
    text = _bullets([DATE_KEPT])
    assert ":" not in text.replace("Zane: I went", "")
    [ex] = read_feedback(text).examples
    assert ex.question == DATE_KEPT["question"] and ex.turns == DATE_KEPT["turns"]
    assert ex.gold == "1 December 2022" and ex.answer == "yesterday"
    assert ex.items == DATE_KEPT["held"]


def test_speaker_missing_from_what_was_extracted_gives_the_all_participants_fix():
    feedback = _prose([SPEAKER])
    assert _themes("extract", feedback) == {"all_participants"}
    assert _fix_rate("extract", feedback, "all_participants") >= 0.6


def test_relative_date_is_fixed_in_the_op_that_could_resolve_it():
    kept = _prose([DATE_KEPT])  # the stored fact kept 'yesterday': the extraction could have resolved it
    assert "resolve_dates" in _themes("extract", kept)
    dated = {**DATE_KEPT, "held": [], "read": ["[2 December 2022] Zane went to Greece yesterday"]}
    assert _themes("answer", _prose([dated])) == {"resolve_dates"}  # the answer had the item's date
    resolved = {**DATE_KEPT, "held": ["Zane went to Greece on 1 December 2022"], "answer": "Morocco"}
    assert _themes("extract", _prose([resolved])) == set()  # the memory held the date: not an extraction loss


def test_examples_of_another_op_give_no_fix_beyond_the_base_rate():
    update_examples = _prose(UPDATE_CASES)
    assert _themes("extract", update_examples) == set() and read_evidence("extract", update_examples).strength == 0
    assert _themes("answer", _prose(EXTRACT_CASES)) <= {"resolve_dates"}  # the answer op can resolve a date
    assert _themes("update", _prose(EXTRACT_CASES + ANSWER_CASES)) == set()
    base = _fix_rate("extract", "", "all_participants")
    assert _fix_rate("extract", update_examples, "all_participants") == pytest.approx(base, abs=0.05)
    assert base < 0.1


def test_memopt_labels_alone_carry_no_signal():
    labels = ("ExtractionError × 5, UpdateError × 3 on mem0.extract (op extract:conv-1:S3). Observation: speaker; "
              "relative date; overwrote; detail lost; DeletionError; RetrievalError.")
    ev = read_evidence("extract", labels)
    assert ev.examples == 0 and ev.weights == {} and ev.strength == 0


def test_contradicting_advice_is_followed_sometimes_and_never_turns_into_the_fix():
    advice = "Facts should be short; drop names and places."
    misleading = _prose(UPDATE_CASES) + "\n\n" + advice
    assert read_evidence("extract", misleading).advice == [advice]
    rate = _fix_rate("extract", misleading, "keep_details")
    assert rate == pytest.approx(_fix_rate("extract", "", "keep_details"), abs=0.05)
    inputs = {"operation": OPERATION["extract"], "current_instruction": SEED["extract"], "feedback": misleading,
              "n_candidates": 4}
    followed = [c["prompt"] for seed in range(60) for c in propose(inputs, seed)["proposals"]]
    share = sum(advice in c for c in followed) / len(followed)
    assert abs(share - ADVICE_FOLLOW_RATE) < 0.1, share
    grounded = _prose(EXTRACT_CASES) + "\n\n" + advice  # the examples win in the other candidates
    assert _fix_rate("extract", grounded, "all_participants") > 0.4


def test_outcome_feedback_gives_a_weaker_but_real_signal():
    outcome = "\n\n".join(f"Question: {c['question']}\nGold answer: {c['gold']}\nPrediction: {c['answer']}\n"
                          f"Score: F1 0.00" for c in EXTRACT_CASES)
    full, bare = read_evidence("extract", _prose(EXTRACT_CASES)), read_evidence("extract", outcome)
    assert 0 < bare.strength < full.strength
    rates = [_fix_rate("extract", text, "resolve_dates") for text in ("", outcome, _prose(EXTRACT_CASES))]
    assert rates[0] < rates[1] < rates[2], rates


def test_operation_kind_reads_the_description():
    assert operation_kind("evermemos.facts: extracts atomic facts from each MemCell") == "extract"
    assert operation_kind("evermemos.segment: segments a session into MemCells (topic boundaries)") == "segment"
    assert operation_kind("evermemos.episode: summarizes each MemCell as an episode narrative") == "summarize"
    assert operation_kind("evermemos.profile: maintains each speaker's profile from the new facts") == "profile"
    assert operation_kind(OPERATION["update"]) == "update"
    assert operation_kind("rag.rewrite_query: rewrites the question into a search query") == "rewrite_query"
    assert operation_kind("extract") == "extract"


def test_proposals_are_deterministic_per_seed_and_vary_across_seeds():
    inputs = {"operation": OPERATION["extract"], "current_instruction": SEED["extract"],
              "feedback": _prose(EXTRACT_CASES), "n_candidates": 4}
    assert propose(inputs, seed=1) == propose(inputs, seed=1)
    assert any(propose(inputs, seed=s) != propose(inputs, seed=1) for s in range(2, 6))
    for c in propose(inputs, seed=1)["proposals"]:  # an edit of the seed, one rationale line per change
        assert c["changes"] and all(line.strip() for line in c["changes"])
        assert "Extract the facts worth remembering about" in c["prompt"]


def test_reflection_through_dspy(sim_lm):
    with dspy.context(lm=sim_lm):
        out = dspy.Predict(S.ProposeInstructions)(operation=OPERATION["answer"], current_instruction=SEED["answer"],
                                                 feedback=_bullets([ABSTAIN, {**ABSTAIN, "question":
                                                                              "When did Luca visit Rome?"}]),
                                                 n_candidates=4).proposals
    assert len(out) == 4
    assert any("abstain" in active_directives("answer", c.prompt) for c in out)
    assert all(c.changes for c in out)


def test_simlm_imports_nothing_but_text_helpers_and_its_catalogue():
    """SimLM may read only the prompt: it must not import data, generator, store or pipelines."""
    allowed = ("memopt.core.text", "memopt.judge.metrics", "memopt.judge.rules", "memopt.core.errors",
               "memopt.simlm.edits", "memopt.core.lazy", "memopt.simlm",
               "memopt.lm.providers", "memopt.lm.spec")  # provider.py registers SimLM as the LM provider ``sim``
    paths = sorted((Path(__file__).resolve().parents[2] / "memopt" / "simlm").glob("*.py"))
    assert len(paths) > 10, "the SimLM wing moved: point this test at it"
    for path in paths:
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("memopt"):
                neutral = node.module == "memopt.judge" and {a.name for a in node.names} <= {"rules", "metrics"}
                assert node.module.startswith(allowed) or neutral, f"{path.name} imports {node.module}"
            if isinstance(node, ast.Import):
                for alias in node.names:
                    assert not alias.name.startswith("memopt") or alias.name.startswith(allowed), path.name


def test_a_labelled_gold_answer_that_starts_like_a_name_stays_the_gold():
    """'Gold answer: Leonid meteor shower' reads like a sentence about someone called Leonid; its label says it is
    the gold answer, so it is, and it is not taken for something the memory held."""
    text = ("Question: What did Priya watch from the roof in November?\nGold answer: Leonid meteor shower\n"
            "System answered: the city lights\nObservation: The memory 'Priya watched the Leonid meteor shower from "
            "the roof' was replaced by 'Priya has a new telescope', although the new fact did not contradict it.")
    [ex] = read_feedback(text).examples
    assert ex.gold == "Leonid meteor shower" and ex.answer == "the city lights"
    assert "Leonid meteor shower" not in ex.held
    assert _themes("update", text) == {"update_on_contradiction"}


def test_a_memory_that_starts_with_its_date_or_is_replaced_by_a_loose_sentence_is_still_a_memory():
    """A stored fact may lead with its resolved date ('the week before 3 July 2023 Omar ...'), and what replaced it
    may not start with a name ('One thing Omar misses ...'); both are memories of an overwrite."""
    text = ("Question: When did Omar run the harbour half-marathon?\nGold answer: the week before 3 July 2023\n"
            "System answered: 20 July 2023\nObservation: The memory 'the week before 3 July 2023 Omar ran the "
            "harbour half-marathon' was overwritten by 'One thing Omar misses is the sea air', although the new "
            "fact did not contradict it.")
    [ex] = read_feedback(text).examples
    assert ex.replaced == [("the week before 3 July 2023 Omar ran the harbour half-marathon",
                            "One thing Omar misses is the sea air")]
    assert _themes("update", text) == {"update_on_contradiction"}
    capital = text.replace("'the week before 3 July 2023 Omar", "'The week before 3 July 2023 Omar")
    assert len(read_feedback(capital).examples[0].replaced) == 1  # a sentence may start with its date, capitalised
    first_person = text.replace("'One thing Omar misses is the sea air'", "'I miss the sea air'")
    assert read_feedback(first_person).examples[0].replaced == []  # someone's words are not a memory
