"""memopt's attribution feedback written in other formats: the format controls of `memopt bench feedback`.

The reflection LM should read the same evidence whatever its format. These controls re-render the examples of
memopt's attribution feedback (`memopt.feedback.build.build_feedback`) in another format and wording, with the same
content: the question, the gold answer, the system's answer, the error type and its reason, the blamed
operation, the source turns, what the operation produced or read, and the observation. Each format is a
registered feedback kind ``attribution_<format>`` (registered in `memopt.feedback.kinds`; a control:
`FeedbackKind.rendering_of` = ``"attribution"``, so the bench runs it only when asked with ``--variants``):

- ``prose``: one paragraph per example, no labels;
- ``qa``: short labels (``Q:``, ``Asked:``, ``Expected:``, ``Got:``);
- ``json``: a JSON list of objects (key names vary with the wording);
- ``table``: one Markdown table;
- ``bullets``: a nested bulleted list;
- ``yaml``: YAML-ish ``key: value`` blocks;
- ``intl``: another language's punctuation (full-width colons, « », „ “, 「 」).

The wordings rotate over the examples (example *i* takes wording *i* mod the number of wordings). This module
knows memopt's own example labels (it re-renders memopt's output) and nothing of any reader.

Renderings can also come as data: a Python file of functions, each rendering ONE example (``(ExampleParts) -> str``;
the examples of a feedback follow one another, a blank line apart). `load_renderings` reads such a file and
`restyle_with` writes a feedback's examples with one of them; `memopt bench feedback --renderings FILE` runs each as
the feedback kind ``attribution_<function name>``.
"""

from __future__ import annotations

import functools
import importlib.util
import inspect
import json
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

__all__ = ["FORMATS", "ExampleParts", "Rendering", "load_renderings", "parts_of", "render", "restyle",
           "restyle_with"]

FORMATS = ("prose", "qa", "json", "table", "bullets", "yaml", "intl")


@dataclass
class ExampleParts:
    """The content of one feedback example, whatever its format."""

    question: str
    gold: str
    answer: str
    error_type: str = ""
    reason: str = ""
    operation: str = ""
    turns: list[tuple[str, str]] = field(default_factory=list)
    produced: list[str] = field(default_factory=list)  # what the operation produced (or the store held)
    read: list[str] = field(default_factory=list)  # what the operation read (or was retrieved)
    observation: str = ""


_NATIVE = {"Question": "question", "Gold answer": "gold", "System answered": "answer", "Observation": "observation"}


def parts_of(example: str, operation: str = "") -> ExampleParts:
    """The parts of one example of memopt's attribution feedback (`memopt.feedback.build._example`)."""
    parts = ExampleParts("", "", "", operation=operation)
    for line in example.splitlines():
        label, _, value = line.partition(": ")
        value = value.strip()
        if label in _NATIVE:
            setattr(parts, _NATIVE[label], value)
        elif label == "Error":
            parts.error_type, _, parts.reason = (s.strip() for s in value.partition(" — "))
        elif label == "Evidence":
            for turn in value.split(" / "):
                who, sep, text = turn.partition(": ")
                parts.turns.append((who.strip(), text.strip()) if sep else ("", turn.strip()))
        elif label in ("This operation produced", "The store held"):
            parts.produced += [p.strip() for p in value.split(" | ") if p.strip()]
        elif label in ("This operation read", "The retrieved context was"):
            parts.read += [p.strip() for p in value.split(" | ") if p.strip()]
    return parts


# --- renderers: each takes the examples and returns one text --------------------------------------------------


def _says(who: str, text: str, w: int) -> str:
    return [f'{who} said "{text}"', f"{who} had told them: “{text}”", f'"{text}", {who} wrote'][w % 3] if who \
        else f'"{text}"'


def _prose(ps: list[ExampleParts]) -> str:
    out = []
    for i, p in enumerate(ps):
        w = i % 3
        turns = " ".join(_says(who, text, w) + "." for who, text in p.turns)
        produced = ", ".join(f'"{x}"' for x in p.produced)
        read = ", ".join(f'"{x}"' for x in p.read)
        s = [
            f'The question "{p.question}" got the answer "{p.answer}", but the expected answer was "{p.gold}".',
            f"When asked {p.question} the system replied “{p.answer}”; the correct answer is “{p.gold}”.",
            f'For "{p.question}" the reference answer is "{p.gold}" while the model answered "{p.answer}".',
        ][w]
        s += f" In the conversation, {turns}" if turns else ""
        s += f" The operation produced {produced}." if produced else ""
        s += f" The operation read {read} from the memory." if read else ""
        s += f" This was blamed on {p.operation} as a {p.error_type} ({p.reason})." if p.error_type else ""
        out.append(f"{s} {p.observation}".strip())
    return "\n\n".join(out)


_QA = (("Q", "Expected", "Got", "Said", "Produced", "Read", "Error", "Op", "Note"),
       ("Asked", "A", "System", "Source turn", "Stored", "Context", "Failure", "Blamed", "Why"))


def _qa(ps: list[ExampleParts]) -> str:
    out = []
    for i, p in enumerate(ps):
        q, g, a, t, pr, rd, e, op, n = _QA[i % len(_QA)]
        lines = [f"{q}: {p.question}", f"{g}: {p.gold}", f"{a}: {p.answer}"]
        lines += [f"{t}: {who}: {text}" for who, text in p.turns]
        lines += [f"{pr}: {x}" for x in p.produced] + [f"{rd}: {x}" for x in p.read]
        lines += [f"{e}: {p.error_type} ({p.reason})", f"{op}: {p.operation}", f"{n}: {p.observation}"]
        out.append("\n".join(lines))
    return "\n\n".join(out)


_KEYS = ({"question": "question", "gold": "expected", "answer": "got", "turns": "evidence", "who": "speaker",
          "text": "text", "produced": "produced", "read": "read", "error": "error_type", "op": "operation",
          "obs": "note"},
         {"question": "q", "gold": "goldAnswer", "answer": "prediction", "turns": "sourceTurns", "who": "by",
          "text": "said", "produced": "memory", "read": "context", "error": "error", "op": "blamedOp",
          "obs": "observation"})


def _obj(p: ExampleParts, k: dict[str, str]) -> dict[str, Any]:
    obj: dict[str, Any] = {k["question"]: p.question, k["gold"]: p.gold, k["answer"]: p.answer,
                           k["turns"]: [{k["who"]: who, k["text"]: text} for who, text in p.turns]}
    if p.produced:
        obj[k["produced"]] = p.produced
    if p.read:
        obj[k["read"]] = p.read
    obj.update({k["error"]: f"{p.error_type}: {p.reason}", k["op"]: p.operation, k["obs"]: p.observation})
    return obj


def _json(ps: list[ExampleParts]) -> str:
    return json.dumps([_obj(p, _KEYS[i % len(_KEYS)]) for i, p in enumerate(ps)], indent=2, ensure_ascii=False)


def _cell(values: list[str]) -> str:
    return "<br>".join(v.replace("|", "/") for v in values)


def _table(ps: list[ExampleParts]) -> str:
    head = "| # | Question | Expected | Got | Evidence | Memory | Error | Op | Note |"
    rows = [head, "|---|---|---|---|---|---|---|---|---|"]
    for i, p in enumerate(ps, start=1):
        turns = _cell([f"{who}: {text}" for who, text in p.turns])
        rows.append(f"| {i} | {p.question} | {p.gold} | {p.answer} | {turns} | {_cell(p.produced + p.read)} | "
                    f"{p.error_type} | {p.operation} | {p.observation.replace('|', '/')} |")
    return "\n".join(rows)


def _bullets(ps: list[ExampleParts]) -> str:
    lines = []
    for i, p in enumerate(ps):
        b = "-*"[i % 2]
        lines += [f"{b} **{p.question}**", f"  {b} expected: {p.gold}", f"  {b} answered: {p.answer}"]
        lines += [f"  {b} {who}: {text}" for who, text in p.turns]
        if p.produced:
            lines.append(f"  {b} produced:")
            lines += [f"    {b} {x}" for x in p.produced]
        if p.read:
            lines.append(f"  {b} read:")
            lines += [f"    {b} {x}" for x in p.read]
        lines += [f"  {b} {p.error_type} in {p.operation}: {p.reason}", f"  {b} {p.observation}"]
    return "\n".join(lines)


def _yaml(ps: list[ExampleParts]) -> str:
    lines = []
    for i, p in enumerate(ps):
        k = _KEYS[i % len(_KEYS)]
        lines += [f"- {k['question']}: {p.question}", f"  {k['gold']}: {p.gold}", f"  {k['answer']}: {p.answer}",
                  f"  {k['turns']}:"]
        lines += [f"    - {k['who']}: {who}\n      {k['text']}: {text}" for who, text in p.turns]
        for key, values in ((k["produced"], p.produced), (k["read"], p.read)):
            if values:
                lines += [f"  {key}:", *(f"    - {v}" for v in values)]
        lines += [f"  {k['error']}: {p.error_type}", f"  {k['op']}: {p.operation}", f"  {k['obs']}: {p.observation}"]
    return "\n".join(lines)


_MARKS = (("：", "«", "»"), ("：", "„", "“"), ("：", "「", "」"))


def _intl(ps: list[ExampleParts]) -> str:
    out = []
    for i, p in enumerate(ps):
        colon, o, c = _MARKS[i % len(_MARKS)]
        lines = [f"Question{colon}{o}{p.question}{c}", f"Expected{colon}{o}{p.gold}{c}",
                 f"Answered{colon}{o}{p.answer}{c}"]
        lines += [f"Evidence{colon}{who}{colon}{o}{text}{c}" for who, text in p.turns]
        lines += [f"Produced{colon}{o}{x}{c}" for x in p.produced] + [f"Read{colon}{o}{x}{c}" for x in p.read]
        lines += [f"Error{colon}{p.error_type} — {p.reason}", f"Operation{colon}{p.operation}",
                  f"Observation{colon}{p.observation}"]
        out.append("\n".join(lines))
    return "\n\n".join(out)


_RENDER = {"prose": _prose, "qa": _qa, "json": _json, "table": _table, "bullets": _bullets, "yaml": _yaml,
           "intl": _intl}


def render(parts: list[ExampleParts], fmt: str) -> str:
    """The examples written in one of `FORMATS`."""
    return _RENDER[fmt](parts)


@functools.cache
def _rendered_feedback() -> type:
    """`Feedback` whose examples are written in another format (defined on first use: `feedback.build` is heavy)."""
    from memopt.feedback.build import Feedback

    @dataclass
    class RenderedFeedback(Feedback):
        body: str = ""

        def text(self) -> str:
            """The head of the attribution feedback, then the examples in their format."""
            head = Feedback.text(replace(self, kind="attribution", examples=[], advice=[]))
            return "\n\n".join([head, self.body]) if self.body else head

    return RenderedFeedback


def restyle(feedback: Any, fmt: str) -> Any:
    """A `Feedback` of the attribution kind with its examples re-rendered in ``fmt`` (its ``text()`` shows them)."""
    return restyle_with(feedback, f"attribution_{fmt}", lambda parts: render(parts, fmt))


Rendering = Callable[[ExampleParts], str]


def restyle_with(feedback: Any, kind: str, write: Callable[[list[ExampleParts]], str]) -> Any:
    """A `Feedback` of the attribution kind named ``kind`` whose examples ``write`` renders (all of them at once)."""
    parts = [parts_of(e, feedback.operation) for e in feedback.examples]
    return _rendered_feedback()(feedback.operation, feedback.prompt_version, feedback.counts, feedback.examples,
                                kind=kind, advice=feedback.advice, failed=feedback.failed,
                                explained=feedback.explained, body=write(parts))


def _takes_one(fn: Any) -> bool:
    """Whether ``fn`` is a function of one argument (a class or an object without a signature is not)."""
    if not callable(fn) or isinstance(fn, type):
        return False
    try:
        return len(inspect.signature(fn).parameters) == 1
    except (TypeError, ValueError):
        return False


def load_renderings(path: str | Path) -> dict[str, Rendering]:
    """The renderings of a Python file, by name: its ``RENDERINGS`` mapping (name to function) when it has one, else
    its public functions of one argument (an `ExampleParts`) that return the text of one example (``__all__`` picks
    them when the file has one). A file that cannot be imported, holds no such function or whose function fails on an
    example is one `ConfigError` naming it."""
    from memopt.core.errors import ConfigError

    file = Path(path)
    if not file.is_file() or file.suffix != ".py":
        raise ConfigError(f"--renderings {path}: not a Python file of render functions (ExampleParts) -> str.")
    spec = importlib.util.spec_from_file_location(f"memopt_renderings_{file.stem}", file)
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    sys.modules[module.__name__] = module  # as an import does: dataclasses and pickling look the module up there
    try:
        spec.loader.exec_module(module)  # type: ignore[union-attr]
    except Exception as exc:  # noqa: BLE001 - any failure of the user's file is reported as one error
        sys.modules.pop(module.__name__, None)
        raise ConfigError(f"--renderings {path}: cannot import it ({type(exc).__name__}: {exc}).") from exc
    table = getattr(module, "RENDERINGS", None)
    if isinstance(table, Mapping):
        candidates = {str(n): f for n, f in table.items()}
    else:
        names = getattr(module, "__all__", None) or [n for n, f in vars(module).items() if inspect.isfunction(f)
                                                     and f.__module__ == module.__name__ and not n.startswith("_")]
        candidates = {n: getattr(module, n, None) for n in names}
    found = {n: f for n, f in candidates.items() if n.isidentifier() and _takes_one(f)}
    if not found:
        raise ConfigError(f"--renderings {path}: no public function of one argument (ExampleParts) -> str in it.")
    probe = ExampleParts("Where did Ana go?", "Lisbon", "Porto", "ExtractionError", "the fact was dropped",
                         "mem0.extract", [("Ana", "I went to Lisbon.")], ["Ana likes tea"], [], "Ana's trip is lost.")
    for name, fn in found.items():
        try:
            text = fn(probe)
        except Exception as exc:  # noqa: BLE001 - a rendering that fails is named, not raised
            raise ConfigError(f"--renderings {path}: {name}() failed on an example ({type(exc).__name__}: "
                              f"{exc}).") from exc
        if not isinstance(text, str) or not text.strip():
            raise ConfigError(f"--renderings {path}: {name}() returned {text!r:.40}, not the text of an example.")
    return found
