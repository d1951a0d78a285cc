"""SimLM's directive reader on hostile text: mangled instruction sentences never raise.

SimLM reads whatever instructions it is sent: a user's seed prompt, a plug-in's, a reflection LM's rewrite. A
sentence it cannot parse must read as "does not say" (stance 0), never as an exception. The inputs are the
catalogue's sentences and every corpus's (whatever its layout), cut short, shuffled, thinned, spliced, mixed into
word salad and sprinkled with punctuation, each read by every operation (30,000 readings, about 35 s).

How much it can find: the thirteenth corpus once crashed the reader ("... and someone gets hurt": `IndexError` at a
clause's end, 79ecc57). With that fix reverted, 6 of 8 seeds (0-7) of this generator hit the crash within 30,000
readings, at readings 231 to 21,051; seed 0, the one this test uses (chosen before that was measured), is one of the
two that do not. So it is a net with holes: a crash on a rare construction can pass it. Before this test was added,
170,000 mutated whole prompts (task, judge and reflection, from one-round runs of the mem0, rag and evermemos
pipelines) through SimLM raised nothing either.
"""

from __future__ import annotations

import random
import traceback
from collections.abc import Iterator
from typing import Any

import pytest
import yaml

from memopt.simlm import CATALOGUE, directive_stances
from memopt.simlm.learned import CORPORA

pytestmark = pytest.mark.slow

RUNS = 30_000
PUNCTUATION = [*".,;:!?()[]{}'\"-–—/|*#`…", "\n", "\n\n", "  ", "\t", "e.g.", "i.e.", "1.", "•"]


def _texts(node: Any) -> Iterator[str]:
    """Every sentence of a corpus, whatever its layout (``sentences:`` items, or lists under directives and halves)."""
    if isinstance(node, str):
        yield node
    elif isinstance(node, dict):
        yield from [node["text"]] if "text" in node else (t for value in node.values() for t in _texts(value))
    elif isinstance(node, list):
        yield from (t for item in node for t in _texts(item))


def _sentences() -> list[str]:
    pool = [s for d in CATALOGUE for s in (*d.phrasings, *d.examples_on, *d.examples_off)]
    for path in sorted(CORPORA.glob("*.yaml")):
        pool += _texts(yaml.safe_load(path.read_text(encoding="utf-8")))
    return pool


def _mutate(text: str, rng: random.Random, pool: list[str], words: list[str]) -> str:
    tokens = text.split()
    kind = rng.randrange(8)
    if kind == 0 and tokens:
        tokens = tokens[: rng.randrange(len(tokens) + 1)]
    elif kind == 1 and tokens:
        rng.shuffle(tokens)
    elif kind == 2:
        tokens = [t for t in tokens if rng.random() > 0.3]
    elif kind == 3:
        tokens.insert(rng.randrange(len(tokens) + 1), rng.choice(PUNCTUATION))
    elif kind == 4:
        tokens = [rng.choice(words) for _ in range(rng.randrange(1, 30))]
    elif kind == 5:
        tokens = [*tokens, rng.choice(PUNCTUATION), *rng.choice(pool).split()]
    elif kind == 6:
        tokens = [t.upper() if rng.random() < 0.5 else t for t in tokens]
    else:
        tokens = [t + rng.choice(PUNCTUATION) if rng.random() < 0.3 else t for t in tokens]
    return " ".join(tokens)


def _hostile(seed: int) -> Iterator[tuple[str, str]]:
    pool = _sentences()
    words = [w for s in pool for w in s.split()]
    ops = sorted({op for d in CATALOGUE for op in d.operations})
    rng = random.Random(seed)
    while True:
        text = _mutate(rng.choice(pool), rng, pool, words)
        if rng.random() < 0.3:
            text = _mutate(text, rng, pool, words)
        for op in ops:
            yield op, text


def test_mangled_instructions_never_raise_in_the_reader():
    for run, (op, text) in enumerate(_hostile(0), start=1):
        if run > RUNS:
            break
        try:  # a reading that raised is never cached, so a repeated sentence is read again
            directive_stances(op, text)
        except Exception:  # noqa: BLE001 - any exception is the failure this test looks for
            pytest.fail(f"run {run}: directive_stances({op!r}, {text!r}) raised\n{traceback.format_exc()}")
