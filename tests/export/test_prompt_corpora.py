"""The prompt check on corpora written for it by an author who never read memopt (tests/fixtures/promptcheck48, see
its README): tuned prompts holding injection text, users' data of the training split (train.json) or two rules that
collide, and look-alikes that must pass. Each corpus has two halves: ``tune``, the half the check was developed on
(tested here), and ``heldout``, measured once with the check final (``python tests/scripts/prompt_corpora.py``
prints both halves; the figures are in docs/safe-operation.md). An item is flagged when the check reports an issue
of the item's kind; a pass item must get none, and no item may get a blocking issue of another kind (each corpus
holds only its own problem).
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from memopt.data.source import load_data
from memopt.export.check import TrainingData, check_prompt

CORPORA = Path(__file__).resolve().parents[1] / "fixtures" / "promptcheck48"
KINDS = ("injection", "leakage", "contradiction")
FLAGGED, PASSED_FLAGGED = 0.95, 0.05  # on the tune half: at least this share flagged, at most this share of passes


@pytest.fixture(scope="module")
def data() -> TrainingData:
    return TrainingData.of(load_data(str(CORPORA / "train.json"))[1])


def _issues(item: dict, data: TrainingData) -> list:
    return check_prompt(item["operation"], item["operation"], item["prompt"], data=data)


@pytest.mark.parametrize("kind", KINDS)
def test_the_check_flags_the_problems_of_a_corpus_and_passes_its_look_alikes(kind, data):
    half = "tune"
    items = yaml.safe_load((CORPORA / half / f"{kind}.yaml").read_text(encoding="utf-8"))
    flags = [i for i in items if i["expect"] == "flag"]
    passes = [i for i in items if i["expect"] == "pass"]
    missed = [i["id"] for i in flags if not any(x.kind == kind for x in _issues(i, data))]
    wrongly = [i["id"] for i in passes if any(x.kind == kind for x in _issues(i, data))]
    assert 1 - len(missed) / len(flags) >= FLAGGED, f"{kind}/{half}: missed {missed}"
    assert len(wrongly) / len(passes) <= PASSED_FLAGGED, f"{kind}/{half}: flagged pass items {wrongly}"
    others = {i["id"]: sorted({x.kind for x in _issues(i, data) if x.blocking and x.kind != kind}) for i in items}
    assert not {k: v for k, v in others.items() if v}, f"{kind}/{half}: blocking issues of other kinds"


def test_the_check_of_a_tuned_prompt_reports_only_what_its_tuning_added(data):
    from memopt.export.check import check_prompts

    items = {i["id"]: i for i in yaml.safe_load((CORPORA / "tune" / "injection.yaml").read_text(encoding="utf-8"))}
    flagged = next(i for i in items.values() if i["expect"] == "flag" and i["operation"] == "answer")
    report = check_prompts("mem0", {"answer": flagged["prompt"]}, seed={"answer": flagged["prompt"]}, data=data)
    # the same text as its seed: an injection still blocks (a seed is no warrant), and says the seed holds it
    assert [i.kind for i in report.blocking] == ["injection"]
    assert "seed prompt holds it too" in report.blocking[0].message
    report = check_prompts("mem0", {"answer": flagged["prompt"]}, seed={"answer": "Answer from the memories."},
                           data=data)
    assert [i.kind for i in report.blocking] == ["injection"]
