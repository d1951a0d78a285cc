"""The contradiction check (`memopt.export.contradiction`) on the cases written for it and on real prompts.

The floors are the figures measured with ``python -m tests.export.contradiction_cases`` (see that module): ``cases``
is the batch the check was developed on; ``cases2`` a second batch, measured first at 14/24 flagged and 1/25 look-
alikes flagged, then tuned on (negated bounds, "yes/no" not a negation, complement clauses, dates written out, a
condition's positive form): its figures no longer say how far the reading carries to new wordings; ``cases3`` a
third batch by another author, measured once and not tuned on (its floor is that measurement). Real prompts,
memopt's seeds and Mem0's own, hold no contradiction: a check that flagged them would block every export."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys

import pytest

from memopt.export.check import check_prompts
from memopt.export.contradiction import contradictions
from memopt.systems.prompts import SEED_PROMPTS
from tests.export.contradiction_cases import BATCHES, measure

# batch: (flag cases flagged on their span, at least; look-alikes flagged, at most), as measured
FLOORS = {"cases": (55, 0), "cases2": (18, 0), "cases3": (19, 3)}


@pytest.mark.parametrize("batch", BATCHES)
def test_the_check_flags_the_conflicting_rules_of_a_case_and_passes_its_look_alikes(batch):
    figures = measure(batch)
    least, most = FLOORS[batch]
    hit = len(figures.flags) - len(figures.missed) - len(figures.off_span)
    assert hit >= least, f"{batch}: {hit} flagged on their span; missed {figures.missed}, off {figures.off_span}"
    assert len(figures.wrongly) <= most, f"{batch}: look-alikes flagged {figures.wrongly}"


def _mem0_prompts() -> dict[str, str]:
    """Mem0's own prompts, read in a process of their own: importing mem0 here would change what later tests of this
    process see (`memopt mem0 check` must be the first to import it)."""
    script = ("import json, mem0.configs.prompts as p; print(json.dumps({k: v for k, v in vars(p).items() "
              "if k.isupper() and isinstance(v, str)}))")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.mark.parametrize("path", sorted(SEED_PROMPTS.rglob("*.md")), ids=lambda p: str(p.relative_to(SEED_PROMPTS)))
def test_a_seed_prompt_of_memopt_holds_no_contradiction(path):
    assert contradictions(path.read_text(encoding="utf-8")) == []


@pytest.mark.slow  # needs the mem0 extra, which .ci/run installs before the slow tests
def test_mem0s_own_prompts_hold_no_contradiction_and_pass_the_check():
    if importlib.util.find_spec("mem0") is None:
        pytest.skip('needs the mem0 extra: pip install -e ".[mem0]"')
    prompts = _mem0_prompts()
    assert len(prompts) >= 4, sorted(prompts)  # the fact, update, answer and agent prompts of mem0ai
    found = {name: contradictions(text) for name, text in prompts.items()}
    assert not {name: pairs for name, pairs in found.items() if pairs}
    report = check_prompts("mem0", prompts)
    assert not [i for i in report.issues if i.kind == "contradiction"], report.text()


def test_a_contradiction_is_reported_with_both_rules_and_why():
    prompt = "Answer from the memories.\n- Reply in exactly one word.\n- Write at least two full sentences."
    [(first, second, why)] = contradictions(prompt)
    assert (first, second) == ("Reply in exactly one word.", "Write at least two full sentences.")
    assert "length" in why
    # the same two rules under different conditions, or with a stated exception, are not a contradiction
    assert contradictions("If the question is yes/no, reply in exactly one word.\nFor questions about plans, write "
                          "at least two full sentences.") == []
    assert contradictions("Reply in exactly one word, except for questions that ask why.\nWrite at least two full "
                          "sentences.") == []
