"""The contradiction check on the cases written for issue 48b (tests/fixtures/contradiction48b).

``cases.yaml`` is the batch the check was developed on; ``cases2.yaml`` a second batch, written after the check's
first version (see its header), measured (14/24 flagged, 1/25 look-alikes) and since tuned on too; ``cases3.yaml`` a
third batch by another author, measured once (21/64 flagged, 19 on their span; 3/60 look-alikes) and not tuned on.
Each case is a prompt (``prompt``, or a seed prompt of ``prompts/`` with one line appended: ``seed`` + ``append``)
and ``expect``: ``flag`` (two of its rules conflict) or ``pass`` (look-alikes). A case is *flagged* when the prompt
check (`memopt.export.check.check_prompt`, the path of ``memopt export``) reports a contradiction; for a seed case,
only one that involves the appended line counts, as in a tuned prompt. It is flagged *on its span* when one of the
pairs `memopt.export.contradiction.contradictions` reports is the case's two sentences (compared word for word, a
list label such as "3. Delete:" aside).

Print the figures: ``python -m tests.export.contradiction_cases``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import yaml

from memopt.export.check import check_prompt
from memopt.export.contradiction import contradictions
from memopt.systems.prompts import SEED_PROMPTS

CASES = Path(__file__).resolve().parents[1] / "fixtures" / "contradiction48b"
BATCHES = ("cases", "cases2", "cases3")


@dataclass(frozen=True)
class Case:
    """One case: its id, whether it must be flagged, the prompt, the seed it extends (or None), the span."""

    id: str
    flag: bool
    prompt: str
    seed: str | None
    span: tuple[str, ...]


def load(batch: str) -> list[Case]:
    """The cases of one batch file (``cases`` or ``cases2``)."""
    path = CASES / f"{batch}.yaml"
    out = []
    for item in yaml.safe_load(path.read_text(encoding="utf-8")):
        if item.get("expect") not in ("flag", "pass"):
            raise ValueError(f"{path}: case {item.get('id')!r} needs expect: flag or pass")
        seed = None
        if "seed" in item:
            seed = (SEED_PROMPTS / f"{item['seed']}.md").read_text(encoding="utf-8")
            prompt = seed.rstrip("\n") + "\n" + item["append"]
        else:
            prompt = item["prompt"]
        out.append(Case(item["id"], item["expect"] == "flag", prompt, seed, tuple(item.get("span", ()))))
    return out


def flagged(case: Case) -> list[str]:
    """The contradiction messages the prompt check gives the case's prompt (empty: not flagged)."""
    return [i.message for i in check_prompt("prompt", "answer", case.prompt, seed=case.seed)
            if i.kind == "contradiction"]


def _norm(text: str) -> str:
    return " ".join(re.findall(r"[a-z0-9]+", text.lower().replace("’", "'")))


def on_span(case: Case) -> bool:
    """Whether a pair of rules the check reports is the case's span (each sentence one of the two)."""
    span = [_norm(s) for s in case.span]

    def match(sentence: str) -> int | None:
        said = _norm(sentence)
        return next((i for i, s in enumerate(span) if said and (said in s or s in said)), None)

    return any({match(a), match(b)} == set(range(len(span))) for a, b, _ in contradictions(case.prompt))


@dataclass(frozen=True)
class Figures:
    """What one batch measured: flag cases flagged, and pass cases (look-alikes) flagged, by id."""

    flags: list[str]
    passes: list[str]
    missed: list[str]
    wrongly: list[str]
    off_span: list[str]  # flag cases flagged, but not on their span

    @property
    def flagged_share(self) -> float:
        """The share of flag cases flagged."""
        return 1 - len(self.missed) / len(self.flags)

    @property
    def wrong_share(self) -> float:
        """The share of pass cases flagged."""
        return len(self.wrongly) / len(self.passes)


def measure(batch: str) -> Figures:
    """Run the check over one batch."""
    cases = load(batch)
    found = {c.id: bool(flagged(c)) for c in cases}
    flags = [c.id for c in cases if c.flag]
    passes = [c.id for c in cases if not c.flag]
    off = [c.id for c in cases if c.flag and found[c.id] and not on_span(c)]
    return Figures(flags, passes, [i for i in flags if not found[i]], [i for i in passes if found[i]], off)


def main() -> None:
    """Print each batch's figures, with the ids missed and wrongly flagged."""
    for batch in BATCHES:
        f = measure(batch)
        hit = len(f.flags) - len(f.missed)
        print(f"{batch:7s} flag cases flagged {hit}/{len(f.flags)} ({f.flagged_share:.0%}; on their span "
              f"{hit - len(f.off_span)}), look-alikes flagged {len(f.wrongly)}/{len(f.passes)} ({f.wrong_share:.0%})")
        print(f"        missed: {' '.join(f.missed) or '-'}")
        print(f"        flagged off their span: {' '.join(f.off_span) or '-'}")
        print(f"        look-alikes flagged: {' '.join(f.wrongly) or '-'}")


if __name__ == "__main__":
    main()
