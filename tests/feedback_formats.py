"""An independent fixture generator: the same feedback examples written in many formats and wordings.

`CASES` are feedback examples as plain data (`ExampleParts`: question, gold, answer, error type, blamed op,
source turns, what the op produced or read, observation), one per kind of loss, in memopt's voice.
`renderings(cases, half)` writes them in each format:

- the **tuned** half: the format controls of the bench (`memopt.feedback.formats.render`: prose, qa, json,
  table, bullets, yaml, intl), which the reader was tuned on;
- the **held-out** half: other wordings and layouts of the same formats, written here before the reader
  was changed and measured once at the end (`measure`); nothing in the reader was tuned on them.

`native(cases)` writes memopt's own attribution format (the reference). `measure(...)` reads a rendering with
SimLM's reader and returns examples found, fields recovered and evidence strength. ``python -m
tests.feedback_formats [--held-out]`` prints the figures of one half on these cases (`fixture_table`) and on
memopt's real attribution feedback re-rendered (`real_table`), as in docs/changelog-reader.md.

Renderings written by someone else come as data (issue 47): a Python file of functions, each rendering one example
(`memopt.feedback.formats.load_renderings`). ``python -m tests.feedback_formats --renderings FILE`` measures them the
same way: the evidence each recovers relative to the native format, on these cases and on the real feedback.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable

from memopt.feedback.formats import FORMATS, ExampleParts, render

E = ExampleParts
CASES: list[ExampleParts] = [
    E("What is the name of Xavi's rabbit?", "Milo", "Rocky", "ExtractionError",
      "the turn held the information; the extraction dropped it", "mem0.extract",
      [("Xavi", "Guess what, I adopted a rabbit named Milo last month, so now the house is even busier!")],
      produced=["Alex met Alex's new landlord Leila last Friday", "Alex is hopeless at cooking for parties"],
      observation="No fact produced from this conversation mentions Xavi, who said it."),
    E("Who wrote the book Alex called a favorite?", "Susanna Clarke", "Piranesi", "ExtractionError",
      "the turn held the information; the extraction dropped it", "mem0.extract",
      [("Alex", "My favorite book right now is Piranesi, it was written by Susanna Clarke.")],
      produced=["Alex's favorite book right now is Piranesi", "Alex got back from Vietnam last Sunday"],
      observation="The detail 'Susanna Clarke' is in the evidence but was lost from the output."),
    E("When did Zane go to Greece?", "1 December 2022", "yesterday", "ExtractionError",
      "the stored fact kept a relative date", "mem0.extract",
      [("Zane", "I went to Greece yesterday, the highlight was the Acropolis.")],
      produced=["Zane went to Greece yesterday, the highlight was the Acropolis"],
      observation="The evidence says 'yesterday' (a relative date); the gold answer is the actual date."),
    E("Where does Zane take rock climbing classes?", "Arts Hub", "Hartwell", "UpdateError",
      "a compatible memory was overwritten", "mem0.update",
      [("Zane", "I started rock climbing last weekend at the Arts Hub.")],
      produced=["Zane started a new job at Hartwell"],
      observation="The memory 'Zane started rock climbing at the Arts Hub' was overwritten by 'Zane started a new "
                  "job at Hartwell', although the new fact did not contradict it."),
    E("Who does Gina play volleyball with?", "Wes", "Not mentioned", "DeletionError",
      "a memory the new fact did not contradict was deleted", "mem0.update",
      [("Gina", "I play volleyball every Wednesday with my sister Wes.")],
      produced=["Gina moved to a new flat in Leeds"],
      observation="The memory 'Gina plays volleyball every Wednesday with her sister Wes' was deleted, although "
                  "the new fact did not contradict it."),
    E("What is the name of Alex's cat?", "Not mentioned", "Vera", "ResponseError",
      "the question cannot be answered from the conversation; the answer op did not abstain", "mem0.answer",
      [("Xavi", "Guess what, I adopted a cat named Olive last Saturday, so now the house is even busier!")],
      read=["[3 June 2023] Xavi adopted a kitten named Rocky last month",
            "[14 July 2023] Alex plays volleyball every Monday with Alex's sister Vera"],
      observation="Nothing in the conversation answers this; the answer should have been 'Not mentioned'."),
    E("What are the names of Mia's cats?", "Max, Luna", "Max", "ResponseError",
      "the context held the needed information; the answer op did not use it", "mem0.answer",
      [("Mia", "I have two cats, Max and Luna.")],
      read=["[3 May 2023] Mia has a cat named Max", "[9 May 2023] Mia has a cat named Luna"],
      observation="The gold answer lists several items; the response gave only part of them."),
]
KIND = {"mem0.extract": "extract", "mem0.update": "update", "mem0.answer": "answer"}


def native(cases: list[ExampleParts]) -> str:
    """memopt's own attribution format (`memopt.feedback.build._example`), the reference."""
    out = []
    for i, p in enumerate(cases, start=1):
        lines = [f"Example {i}:", f"Question: {p.question}", f"Gold answer: {p.gold}", f"System answered: {p.answer}",
                 f"Error: {p.error_type} — {p.reason}",
                 "Evidence: " + " / ".join(f"{who}: {text}" for who, text in p.turns)]
        if p.produced:
            lines.append("This operation produced: " + " | ".join(p.produced))
        if p.read:
            lines.append("This operation read: " + " | ".join(p.read))
        out.append("\n".join([*lines, f"Observation: {p.observation}"]))
    return "\n\n".join(out)


# --- the held-out half: other wordings and layouts, never used while tuning the reader -------------------------


def _prose_b(ps: list[ExampleParts]) -> str:
    out = []
    for p in ps:
        turns = " ".join(f"Earlier {who} had mentioned “{text}”." for who, text in p.turns)
        memory = "; ".join(f"'{x}'" for x in p.produced + p.read)
        out.append(f"Someone asked: {p.question} The right answer would have been {p.gold}; instead the system gave "
                   f"{p.answer}. {turns} At that point the memory contained {memory}. Blame falls on {p.operation} "
                   f"({p.error_type}). {p.observation}")
    return "\n\n".join(out)


def _qa_b(ps: list[ExampleParts]) -> str:
    out = []
    for p in ps:
        lines = [f"Question - {p.question}", f"Correct answer => {p.gold}", f"Model said -> {p.answer}"]
        lines += [f"Turn - {who}: {text}" for who, text in p.turns]
        lines += [f"Memory - {x}" for x in p.produced + p.read]
        lines += [f"Type - {p.error_type}", f"Stage - {p.operation}", f"Comment - {p.observation}"]
        out.append("\n".join(lines))
    return "\n\n".join(out)


def _qa_c(ps: list[ExampleParts]) -> str:
    out = []
    for p in ps:
        lines = [f"Query: {p.question}", f"Reference: {p.gold}", f"Output: {p.answer}"]
        lines += [f"Quote: {who}: \"{text}\"" for who, text in p.turns]
        lines += [f"Kept: {x}" for x in p.produced] + [f"Looked up: {x}" for x in p.read]
        lines += [f"Cause: {p.error_type} at {p.operation}", p.observation]
        out.append("\n".join(lines))
    return "\n\n".join(out)


def _json_b(ps: list[ExampleParts]) -> str:
    items = [{"case": {"input": {"question": p.question}, "target": p.gold, "output": p.answer,
                       "dialogue": [[who, text] for who, text in p.turns], "stored": p.produced,
                       "retrieved": p.read, "failure": {"type": p.error_type, "stage": p.operation,
                                                        "why": p.reason}, "remark": p.observation}} for p in ps]
    return "```json\n" + json.dumps({"failures": items}, indent=2) + "\n```"


def _table_b(ps: list[ExampleParts]) -> str:
    rows = ["| Asked | Model said | Should be | Conversation | Stored / retrieved | Blame |",
            "|:--|:--|:--|:--|:--|:--|"]
    for p in ps:
        turns = "; ".join(f"{who}: {text}" for who, text in p.turns)
        rows.append(f"| {p.question} | {p.answer} | {p.gold} | {turns} | {'; '.join(p.produced + p.read)} | "
                    f"{p.error_type} ({p.operation}) |")
    return "\n".join(rows)


def _bullets_b(ps: list[ExampleParts]) -> str:
    lines = []
    for i, p in enumerate(ps, start=1):
        lines += [f"{i}. Question — {p.question}", f"   + right answer — {p.gold}", f"   + system — {p.answer}"]
        lines += [f"   + {who} (in the chat) — {text}" for who, text in p.turns]
        lines += [f"   + in memory — {x}" for x in p.produced + p.read]
        lines += [f"   + blamed — {p.operation}, {p.error_type}", f"   + {p.observation}"]
    return "\n".join(lines)


def _yaml_b(ps: list[ExampleParts]) -> str:
    lines = ["failures:"]
    for p in ps:
        lines += [f"  - query: \"{p.question}\"", f"    reference: {p.gold}", f"    output: {p.answer}",
                  "    conversation:", *(f"      - \"{who}: {text}\"" for who, text in p.turns)]
        if p.produced or p.read:
            lines += ["    memory_after:", *(f"      - {x}" for x in p.produced + p.read)]
        lines += [f"    cause: {p.error_type}", f"    component: {p.operation}", f"    note: {p.observation}"]
    return "\n".join(lines)


def _intl_b(ps: list[ExampleParts]) -> str:
    out = []
    for i, p in enumerate(ps):
        if i % 2:
            lines = [f"Question : « {p.question} »", f"Expected : « {p.gold} »", f"Answered : « {p.answer} »"]
            lines += [f"{who} : « {text} »" for who, text in p.turns]
            lines += [f"Memory : « {x} »" for x in p.produced + p.read]
        else:
            lines = [f"Question：『{p.question}』", f"Expected：『{p.gold}』", f"Answered：‹{p.answer}›"]
            lines += [f"{who}：『{text}』" for who, text in p.turns]
            lines += [f"Memory：『{x}』" for x in p.produced + p.read]
        lines += [f"Error：{p.error_type}", f"Operation：{p.operation}", p.observation]
        out.append("\n".join(lines))
    return "\n\n".join(out)


HELD_OUT: dict[str, Callable[[list[ExampleParts]], str]] = {
    "prose_b": _prose_b, "qa_b": _qa_b, "qa_c": _qa_c, "json_b": _json_b, "table_b": _table_b,
    "bullets_b": _bullets_b, "yaml_b": _yaml_b, "intl_b": _intl_b,
}


def renderings(cases: list[ExampleParts], half: str) -> dict[str, str]:
    """Every rendering of the cases in one half ("tuned" or "held_out"), by format (and wording) name."""
    if half == "tuned":
        return {fmt: render(cases, fmt) for fmt in FORMATS}
    return {name: fn(cases) for name, fn in HELD_OUT.items()}


# --- measuring the reader -------------------------------------------------------------------------------------


def _norm(text: str | None) -> str:
    return re.sub(r"[\s\"'“”«».?!]+", " ", text or "").strip().lower()


def fields_recovered(p: ExampleParts, ex: object) -> dict[str, bool]:
    """Which parts of one example the reader recovered (``ex``: a `memopt.simlm.example_parts.Example`)."""
    turns = {(who, _norm(text)) for who, text in ex.turns}
    memory = {_norm(x) for x in [*ex.held, *ex.context]}
    return {"question": _norm(ex.question) == _norm(p.question), "gold": _norm(ex.gold) == _norm(p.gold),
            "answer": _norm(ex.answer) == _norm(p.answer),
            "turns": all((who, _norm(text)) in turns for who, text in p.turns),
            "memory": all(_norm(x) in memory for x in p.produced + p.read),
            "error": p.error_type in (ex.error or ""), "operation": p.operation in (ex.operation or "")}


def measure(cases: list[ExampleParts], text: str) -> dict[str, float]:
    """Examples found, share of fields recovered (over the examples found in order) and the evidence strength
    (mean over the cases' op kinds of `read_evidence` of that kind's examples written alone)."""
    from memopt.simlm.examples import read_feedback

    found = read_feedback(text).examples
    scores = [fields_recovered(p, ex) for p, ex in zip(cases, found, strict=False)]
    per_field = {k: sum(s[k] for s in scores) / len(cases) for k in scores[0]} if scores else {}
    return {"found": len(found), "expected": len(cases), **per_field}


def strength(cases: list[ExampleParts], write: Callable[[list[ExampleParts]], str]) -> float:
    """The mean evidence strength over the op kinds, each kind reading only its own examples written by ``write``."""
    from memopt.simlm.reflect import read_evidence

    kinds = sorted({KIND[p.operation] for p in cases})
    values = [read_evidence(k, write([p for p in cases if KIND[p.operation] == k])).strength for k in kinds]
    return sum(values) / len(values)


# --- the measurement (python -m tests.feedback_formats [--held-out]) ------------------------------------------


def _writers(half: str) -> dict[str, Callable[[list[ExampleParts]], str]]:
    """The writers of one half ("tuned", "held_out"), or of a renderings file (a path: one function per example,
    the examples a blank line apart)."""
    if half == "tuned":
        return {fmt: (lambda f: lambda ps: render(ps, f))(fmt) for fmt in FORMATS}
    if half == "held_out":
        return dict(HELD_OUT)
    from memopt.feedback.formats import load_renderings

    return {name: (lambda one: lambda ps: "\n\n".join(one(p) for p in ps))(fn)
            for name, fn in load_renderings(half).items()}


def fixture_table(half: str) -> list[str]:
    """Examples found, fields recovered and evidence strength on `CASES`, per rendering of one half (or file)."""
    keys = ["question", "gold", "answer", "turns", "memory", "error", "operation"]
    lines = [f"| rendering | found | {' | '.join(keys)} | strength |", "|---" * (len(keys) + 3) + "|"]
    for name, write in {"native": native, **_writers(half)}.items():
        m = measure(CASES, write(CASES))
        lines.append(f"| {name} | {m['found']}/{m['expected']} | " + " | ".join(f"{m.get(k, 0):.2f}" for k in keys)
                     + f" | {strength(CASES, write):.2f} |")
    return lines


def real_table(half: str) -> list[str]:
    """Evidence strength of memopt's real attribution feedback (round 1 of mem0 and evermemos with SimLM on three
    synthetic datasets), written natively and re-rendered per rendering of one half."""
    import statistics

    from memopt.data.source import load_data
    from memopt.feedback.formats import parts_of
    from memopt.lm.spec import parse_lm_specs
    from memopt.optimize.reflective import ReflectiveOptimizer
    from memopt.optimize.scoring import Scorer
    from memopt.simlm.reflect import operation_kind, read_evidence
    from memopt.systems import make_system

    writers = _writers(half)
    found: dict[str, list[float]] = {n: [] for n in ["native", *writers]}
    power: dict[str, list[float]] = {n: [] for n in ["native", *writers]}
    for pipeline in ("mem0", "evermemos"):
        for seed in (3, 5, 7):
            _, conversations = load_data(f"synthetic:conversations=2,sessions=6,seed={seed}")
            scorer = Scorer(*[parse_lm_specs("sim")] * 3, budget=100_000)
            system = make_system(pipeline)
            optimizer = ReflectiveOptimizer(scorer)
            train = optimizer._evaluate(system, conversations)
            blamed = optimizer._attribute(train)[0]
            for op, fb in optimizer._feedback(system, train, blamed, 1).items():
                kind = operation_kind(f"{system.name}.{op}: {system.op_spec(op).description}")
                head = fb.text().split("\n\nExample 1:")[0]
                parts = [parts_of(e, f"{system.name}.{op}") for e in fb.examples]
                texts = {"native": fb.text(), **{n: f"{head}\n\n{w(parts)}" for n, w in writers.items()}}
                for name, text in texts.items():
                    ev = read_evidence(kind, text)
                    found[name].append(ev.examples / len(fb.examples))
                    power[name].append(ev.strength)
    base = statistics.fmean(power["native"])
    lines = [f"{len(power['native'])} op feedbacks", "| rendering | examples found / shown | evidence strength | "
             "vs native |", "|---|---|---|---|"]
    for name in power:
        mean = statistics.fmean(power[name])
        lines.append(f"| {name} | {statistics.fmean(found[name]):.2f} | {mean:.2f} | {mean / base:.2f} |")
    return lines


if __name__ == "__main__":
    import sys

    chosen = "held_out" if "--held-out" in sys.argv else "tuned"
    if "--renderings" in sys.argv:
        chosen = sys.argv[sys.argv.index("--renderings") + 1]
    print("\n".join(fixture_table(chosen) + [""] + real_table(chosen)))
