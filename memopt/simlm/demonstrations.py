"""Directives shown by example: a demonstration whose output has a directive's observable effect turns it on.

An instruction-following LM learns from few-shot demonstrations as well as from rules, so SimLM does too, but only
from what a demonstration *shows*: a labelled input ("Input:", "Context:", "Question:", "Memories:", "New fact:") and
a labelled output ("Output:", "Answer:", "Query:", "Summary:", "Result:", "Correct:", or "->"), or a good and a bad
example ("Good: ... Bad: ..."). A directive is demonstrated when the output differs from the input the way the
directive's behaviour (its catalogue ``behaviour`` column) differs from its ``failure``:

- ``resolve_dates``: the input has a relative time expression, the output a calendar date and none;
- ``all_participants``: the input has two or more speaker labels ("Ana: ... Ben: ..."), the output names them all;
- ``keep_details``: the good example carries more names and numbers than the bad one (an output that merely keeps
  the names of a short input shows nothing: every extractor does that on short sentences);
- ``combine_all``: the context has two or more items and the answer draws on two or more of them;
- ``abstain``: the answer says it is not known;
- ``expand_query``: the query adds three or more words the question does not have;
- ``delete_only_explicit``: of two or more memories, the result deletes fewer than all;
- ``update_on_contradiction``: old / new pairs with their decisions, one pair on a shared topic ADDed and every UPDATE's
  new fact announcing a change ("moved", "now", "no longer": what SimLM itself reads as a contradiction).

Labels may be short ("Q:" / "A:", an "A:" only after a "Q:"), an output may be the fact to store ("Fact to store:"),
and a quoted 'yesterday' is still a relative date. A demonstration of the behaviour *without* the directive (an
output that keeps "yesterday") turns nothing on. Format examples (an empty JSON list) show no effect.
"""

from __future__ import annotations

import re
from functools import lru_cache

from memopt.simlm.concepts import ABSTAIN_PHRASE, CONCEPTS
from memopt.simlm.reading import has_change_cue

__all__ = ["demonstrated"]

_INPUTS = (r"input|context|question|memories|memory|conversation|transcript|dialogue|new fact|existing memories|user|q|"
           r"old(?: memory| fact)?|new(?: memory)?")
_OUTPUTS = (r"output|answer|query|rewritten query|summary|result|correct|expected|facts|response|action|good|bad|a|"
            r"(?:stored )?fact(?: to (?:store|save|keep|record|extract))?|decision|event|operation")
# short labels: "Q:" / "A:" ask and answer
_SHORT = {"q": "question", "a": "answer"}
_SUFFIX = r"(?: (?:output|summary|example|answer|fact|memory|query))?"
_LABEL = re.compile(rf"(?i)(?<![\w'])((?:{_INPUTS}|{_OUTPUTS}){_SUFFIX})"
                    r"(?: \([^)]*\))?\s*:|(->|→)")
_MONTHS = r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*"
_DATE = re.compile(rf"(?i)\b\d{{4}}-\d\d(?:-\d\d)?\b|\b\d{{1,2}} {_MONTHS}\b|\b{_MONTHS} \d{{1,2}}\b|\b(?:19|20)\d\d\b")
_SPEAKER = re.compile(r"(?:^|[.'\"\[\s])([A-Z][a-z]+):")
_DETAIL = re.compile(r"(?<=[a-z,] )[A-Z][a-z]+|\d+")
_ITEM = re.compile(r"\[(\d+)\]\s*([^\[]+)")
_QUOTED = re.compile(r"'([^']+)'|\"([^\"]+)\"")
_STOP = frozenset("the a an and or of to in on at for with is are was were does do did what which who where when how "
                  "i you he she it we they my your his her its our their about".split())


def _segments(text: str) -> list[tuple[str, str]]:
    """(label, text) pairs in order; the text before the first label is labelled "" ("->" labels its output)."""
    out, last, label, asked = [], 0, "", False
    for m in _LABEL.finditer(text):
        if (m.group(1) or "").lower() == "a" and not asked:
            continue  # "A:" answers only after a "Q:" (else it is a speaker, or a word)
        asked = asked or (m.group(1) or "").lower() == "q"
        out.append((label, text[last:m.start()]))
        label, last = (m.group(1) or "output").lower(), m.end()
        label = _SHORT.get(label, label)
    out.append((label, text[last:]))
    return [(k, v.strip()) for k, v in out if v.strip()]


def _stems(text: str) -> set[str]:
    return {w[:4] for w in re.findall(r"[a-z]+", text.lower()) if w not in _STOP and len(w) > 2}


def _is_output(label: str) -> bool:
    return bool(re.fullmatch(rf"(?:{_OUTPUTS})(?: \w+)?", label)) and not label.startswith(("good", "bad"))


def _shown(directive: str, segs: list[tuple[str, str]]) -> bool:
    labels = [k for k, _ in segs]
    good = next((v for k, v in segs if k.startswith("good")), None)
    bad = next((v for k, v in segs if k.startswith("bad")), None)
    if directive == "keep_details" and good is not None and bad is not None:
        return len(_DETAIL.findall(good)) > len(_DETAIL.findall(bad)) and len(good) > len(bad)
    outputs = [(k, v) for k, v in segs if _is_output(k)]
    if not outputs:
        return False
    first_out = labels.index(outputs[0][0])
    source = " ".join(v for _, v in segs[:first_out])
    out = " ".join(v for _, v in outputs)
    relative = CONCEPTS["RELATIVE"].pattern
    if directive == "resolve_dates":  # a quoted 'yesterday' is still one
        source, plain_out = (re.sub(r"[\"'‘’“”]", " ", s).lower() for s in (source, out))
        return bool(relative.search(source)) and bool(_DATE.search(out)) and not relative.search(plain_out)
    if directive == "all_participants":
        speakers = set(_SPEAKER.findall(source))
        return len(speakers) >= 2 and all(s in out for s in speakers)
    if directive == "abstain":
        return any(k.startswith("answer") or k == "output" for k, _ in outputs) and bool(
            re.search(rf"(?<![\w'-]){ABSTAIN_PHRASE}", out.lower().replace("'", "")))
    question = " ".join(v for k, v in segs if k == "question")
    if directive == "combine_all":
        items = [_stems(t) - _stems(question) for _, t in _ITEM.findall(source)]
        answer = _stems(" ".join(v for k, v in outputs if k.startswith("answer")))
        return len(items) >= 2 and sum(bool(i & answer) for i in items) >= 2
    if directive == "expand_query":
        query = " ".join(v for k, v in outputs if "query" in k)
        return bool(question) and len(_stems(query) - _stems(question)) >= 3
    if directive == "update_on_contradiction":
        return _add_unless_changed(segs)
    if directive == "delete_only_explicit":
        memories = [a or b for a, b in _QUOTED.findall(" ".join(v for k, v in segs if k.startswith(("memor",
                                                                                                  "existing"))))]
        deleted = [m for m in memories if m in out]
        return len(memories) >= 2 and "delete" in out.lower() and 0 < len(deleted) < len(memories)
    return False


def _add_unless_changed(segs: list[tuple[str, str]]) -> bool:
    """Old / new pairs with their decisions: some pair on a shared topic is ADDed, and every UPDATE's new fact
    announces a change ("moved", "now", "no longer"): the demonstration updates only on a contradiction."""
    decisions, old, new = [], "", ""
    for label, text in segs:
        if label.startswith("old") or label.startswith("existing"):
            old = text
        elif label.startswith("new"):
            new = text
        elif _is_output(label) and old and new:
            verdict = re.match(r"\W*(add|update)\b", text, re.IGNORECASE)
            if verdict:
                decisions.append((verdict.group(1).lower(), old, new))
            old = new = ""
    shared_add = any(d == "add" and _stems(o) & _stems(n) for d, o, n in decisions)
    return shared_add and all(has_change_cue(n) for d, _, n in decisions if d == "update")


@lru_cache(maxsize=4096)
def demonstrated(directive: str, instructions: str) -> bool:
    """Whether a demonstration in ``instructions`` (one per line or paragraph) shows the directive's effect."""
    blocks = [b for b in re.split(r"\n\s*\n|\n(?=\s*(?:example|input|context|question|good|bad)\b)", instructions,
                                  flags=re.IGNORECASE) if b.strip()]
    return any(_shown(directive, _segments(b)) for b in blocks)
