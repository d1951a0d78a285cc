"""SimLM as reflection LM: candidates follow the feedback's theme; vague feedback gives no signal."""

from __future__ import annotations

import ast
from pathlib import Path

import dspy

from memopt.lm import signatures as S
from memopt.lm.directives import active_directives
from memopt.lm.sim.reflect import propose

SEED_EXTRACT = "Extract the facts worth remembering about the user."
DATE_FEEDBACK = """ExtractionError on 6 failed cases.
- Question: When did Bea adopt Tofu? Gold: 7 May 2023. Evidence turn: "I adopted Tofu yesterday".
  The extracted fact kept the relative date 'yesterday' and no date.
- Question: When did Alex move to Denver? Gold: the week before 9 June 2023. Evidence said 'last week'."""


def _themes(candidates: list[str], op: str, base: str) -> list[frozenset[str]]:
    before = active_directives(op, base)
    return [active_directives(op, c) - before for c in candidates]


def test_matching_feedback_steers_candidates_to_the_theme():
    out = propose({"operation": "extract: facts from dialogue turns", "current_instruction": SEED_EXTRACT,
                   "feedback": DATE_FEEDBACK, "n_candidates": 8}, seed=0)["proposals"]
    assert len(out) == 8 and len(set(out)) == 8
    assert all(c.startswith(SEED_EXTRACT) for c in out)
    themes = _themes(out, "extract", SEED_EXTRACT)
    hits = sum("resolve_dates" in t for t in themes)
    assert hits >= 4, themes
    assert any(t == frozenset() for t in themes) or hits < 8  # some candidates miss: selection matters


def test_vague_feedback_gives_no_steering():
    counts = {"resolve_dates": 0, "all_participants": 0, "keep_details": 0}
    for seed in range(30):
        out = propose({"operation": "extract", "current_instruction": SEED_EXTRACT,
                       "feedback": "Average F1 0.31 over 40 cases.", "n_candidates": 3}, seed=seed)["proposals"]
        for theme in _themes(out, "extract", SEED_EXTRACT):
            for d in theme:
                counts[d] += 1
    assert all(n >= 8 for n in counts.values()), counts  # drawn at random, every theme appears


def test_proposals_are_deterministic_per_seed_and_vary_across_seeds():
    inputs = {"operation": "extract", "current_instruction": SEED_EXTRACT, "feedback": DATE_FEEDBACK,
              "n_candidates": 4}
    assert propose(inputs, seed=1) == propose(inputs, seed=1)
    assert any(propose(inputs, seed=s) != propose(inputs, seed=1) for s in range(2, 6))


def test_reflection_through_dspy(sim_lm):
    with dspy.context(lm=sim_lm):
        out = dspy.Predict(S.ProposeInstructions)(operation="answer: answers questions from context",
                                                 current_instruction="Answer the question.",
                                                 feedback="ResponseError: adversarial question, gold 'Not mentioned', "
                                                          "the answer guessed from an unrelated memory.",
                                                 n_candidates=3).proposals
    assert len(out) == 3
    assert any("abstain" in active_directives("answer", c) for c in out)


def test_simlm_imports_nothing_but_text_helpers_and_its_catalogue():
    """SimLM may read only the prompt: it must not import data, generator, store or pipelines."""
    allowed = ("memopt.text", "memopt.metrics", "memopt.lm.directives", "memopt.lm.sim")
    for path in (Path(__file__).resolve().parent.parent / "memopt" / "lm" / "sim").glob("*.py"):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("memopt"):
                assert node.module.startswith(allowed), f"{path.name} imports {node.module}"
            if isinstance(node, ast.Import):
                for alias in node.names:
                    assert not alias.name.startswith("memopt") or alias.name.startswith(allowed), path.name
