"""Data with planted failure mechanisms, for the report and labelling tests: the tests build it, nothing is a fixture.

Two small LoCoMo-format conversations, each with two speakers over two dated sessions. The second speaker tells
facts about themselves (lost when the extraction keeps one speaker only: SimLM's ``all_participants`` directive
missing); the first speaker adopts a pet, then "also got" another (overwritten when the update merges compatible
facts: ``update_on_contradiction`` missing), tells what they did "last Saturday", and gives a quilt to a neighbour
named in a second clause (a detail an extraction without ``keep_details`` cuts: an extraction failure of a third
kind, planted by neither directive). The seed prompts of memopt's ``mem0`` lack both directives; `prompts` writes them
with either directive put back, so a test can tell which cases each mechanism caused: those that pass once it is
put back.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import ROOT

SEED = ROOT / "prompts" / "mem0"
ONE_SPEAKER = ("[IMPORTANT]: GENERATE FACTS SOLELY BASED ON THE USER'S MESSAGES. DO NOT INCLUDE INFORMATION FROM "
               "ASSISTANT OR SYSTEM MESSAGES.")
EVERY_SPEAKER = "Both people in the conversation count: store what either of them says about themselves."
ONLY_ON_CONTRADICTION = ("Overwrite a memory only if the new fact makes it false. When the new fact does not "
                         "contradict the memory, add it as a new one.")


def _conversation(i: int, a: str, b: str) -> dict:
    sessions = [
        [(a, "I adopted a beagle named Rocky from the shelter."),
         (b, "That's lovely! I started a new job as a nurse at Mercy Hospital."),
         (a, "I ran a half marathon last Saturday."), (b, "I bought a red bicycle for my commute.")],
        [(a, "We also got a kitten named Mochi, so the house is busy."),
         (b, "I moved to a flat in Denver near the park."), (a, "I visited my grandmother in Lisbon yesterday."),
         (b, "I have been learning pottery at the Clay Studio."),
         (a, "I finished the quilt at last, and I gave it to my neighbour Edith.")],
    ]
    conversation: dict = {"speaker_a": a, "speaker_b": b}
    for n, turns in enumerate(sessions, start=1):
        conversation[f"session_{n}_date_time"] = f"1:00 pm on {7 * n} May, 2023"
        conversation[f"session_{n}"] = [{"speaker": who, "dia_id": f"D{n}:{k}", "text": text}
                                        for k, (who, text) in enumerate(turns, start=1)]
    qa = [(f"What job did {b} start?", "nurse", "D1:2", 4), (f"What did {b} buy for the commute?", "a red bicycle",
                                                              "D1:4", 4),
          (f"Where did {b} move?", "Denver", "D2:2", 4), (f"What is {b} learning?", "pottery", "D2:4", 4),
          (f"What is the name of {a}'s beagle?", "Rocky", "D1:1", 4),
          (f"When did {a} run a half marathon?", "6 May 2023", "D1:3", 2),
          (f"When did {a} visit her grandmother?", "13 May 2023", "D2:3", 2),
          (f"Who did {a} give the quilt to?", "Edith", "D2:5", 4)]
    return {"sample_id": f"plant-{i}", "conversation": conversation,
            "qa": [{"question": q, "answer": g, "evidence": [e], "category": c} for q, g, e, c in qa]}


def write_data(path: Path) -> Path:
    """The two conversations as a LoCoMo JSON file."""
    path.write_text(json.dumps([_conversation(0, "Nina", "Omar"), _conversation(1, "Rosa", "Theo")], indent=1))
    return path


def prompts(folder: Path, *, every_speaker: bool = False, only_on_contradiction: bool = False) -> Path:
    """mem0's seed prompts in ``folder/mem0/`` with either directive put back; ``folder``."""
    out = folder / "mem0"
    out.mkdir(parents=True, exist_ok=True)
    extract = (SEED / "extract.md").read_text()
    if every_speaker:
        assert ONE_SPEAKER in extract, "the seed extract prompt changed: update tests/report/planted.py"
        extract = extract.replace(ONE_SPEAKER, EVERY_SPEAKER).replace(
            "- Create the facts based on the user messages only. Do not pick anything from the assistant or system "
            "messages.\n", "").replace("about the user, if any,", "about both speakers")
    update = (SEED / "update.md").read_text() + (f"\n{ONLY_ON_CONTRADICTION}\n" if only_on_contradiction else "")
    (out / "extract.md").write_text(extract)
    (out / "update.md").write_text(update)
    (out / "answer.md").write_text((SEED / "answer.md").read_text())
    return folder


def traced_run(tmp: Path, name: str, **directives: bool) -> tuple[Path, Path, set[str]]:
    """``memopt run`` (its Python API) of mem0 on the data with the given directives put back: the results file, the
    trace directory and the failed case ids."""
    from memopt.attribution.case import is_failed
    from memopt.evaluate.pipeline import run_pipeline

    data = tmp / "planted.json"
    if not data.exists():
        write_data(data)
    trace = tmp / f"{name}-trace"
    result = run_pipeline("mem0", str(data), prompts=prompts(tmp / f"{name}-prompts", **directives), trace_dir=trace)
    results = result.save(tmp / f"{name}-results.json")
    return Path(results), trace, {c.case_id for c in result.cases if is_failed(c.to_dict())}


def attribute(results: Path, trace: Path) -> Path:
    """What `memopt attribute --results R --trace T --out T/attributions.jsonl` writes (its Python API, SimLM's
    judge); the attributions file."""
    from memopt.attribution.attribute_run import attribute_run
    from memopt.attribution.types import save_attributions
    from memopt.evaluate.run import RunResult
    from memopt.judge.judges import make_judge

    found = attribute_run(RunResult.load(results), trace, make_judge("sim"), source=str(results))
    return save_attributions(found, trace / "attributions.jsonl")
