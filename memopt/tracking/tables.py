"""A round's candidates, trials and per-case outputs as MLflow tables (``mlflow.log_table``; read back with
``mlflow.load_table``).

Each round run logs, when it has rows:

- ``candidates.json``: one row per proposed instruction: round, op, prompt (registry name), candidate number,
  the full text, the diff against the current one, the rationale, whether the prompt check refused it, the
  trials that used it and their best val F1 and knobs, whether the round kept it, the reflection trace it came
  from;
- ``trials.json``: one row per trial: round, trial, configuration in words, the candidate per op and the knobs
  (JSON), val F1, errored;
- ``cases.json``: one row per val / test case of the round's report: round, split, case id, category (number
  and name), question, gold, prediction, F1, judge verdict, error. The last round's rows are the outputs of the
  system the run ends with; round 0's are the starting prompts'.

So ``mlflow.load_table("candidates.json", run_ids=[...round runs...], extra_columns=["run_id"])`` is every
candidate of a run as one DataFrame. Texts pass through `memopt.lm.redaction.redact`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from memopt.data.model import CATEGORIES
from memopt.lm.redaction import redact, secret_values

__all__ = ["CANDIDATES", "TRIALS", "CASES", "candidate_rows", "trial_rows", "case_rows", "log_tables"]

CANDIDATES, TRIALS, CASES = "candidates.json", "trials.json", "cases.json"


def candidate_rows(record: Any, outcome: Any, names: Mapping[str, str], traces: Mapping[str, str]) -> list[dict]:
    """Every candidate of a round (``record.proposals`` with their texts from ``outcome.candidates``)."""
    if outcome is None:
        return []
    texts = {(op, i): text for op, found in outcome.candidates.items() for i, text in enumerate(found, start=1)}
    why = {(r.op, p.text): p.rationale for r in getattr(outcome, "reflections", []) or [] for p in r.proposals}
    kept = dict(outcome.choice.instructions) if outcome.accepted else {}
    rows = []
    for c in record.proposals:
        text = texts.get((c["op"], c["candidate"]), "")
        rows.append({"round": record.round, "op": c["op"], "prompt": names.get(c["op"], c["op"]),
                     "candidate": c["candidate"], "text": redact(text), "diff": redact(c["diff"]),
                     "rationale": redact(why.get((c["op"], text), "")), "refused_by_check": False,
                     "trials": c["trials"], "val_f1": c["val_f1"],
                     "knobs": json.dumps(c["knobs"]) if c["knobs"] is not None else "",
                     "kept": bool(text) and kept.get(c["op"]) == text, "reflection_trace": traces.get(c["op"], "")})
    for refused in getattr(outcome, "rejected", []) or []:
        op = refused.split(":", 1)[0]
        rows.append({"round": record.round, "op": op, "prompt": names.get(op, op), "candidate": 0, "text": "",
                     "diff": "", "rationale": redact(refused), "refused_by_check": True, "trials": 0, "val_f1": None,
                     "knobs": "", "kept": False, "reflection_trace": traces.get(op, "")})
    return rows


def trial_rows(record: Any) -> list[dict]:
    """Every trial of a round (``record.trials_log``)."""
    return [{"round": record.round, "trial": t["trial"], "configuration": t["config"], "ops": json.dumps(t["ops"]),
             "knobs": json.dumps(t["knobs"]), "val_f1": t["val_f1"], "errored": t["errored"]}
            for t in record.trials_log]


def case_rows(round_index: int, reported: Mapping[str, Sequence[Any]]) -> list[dict]:
    """Every case of a round's val / test report (`memopt.evaluate.run.CaseResult` per split)."""
    hidden = secret_values()  # read once: each read scans the environment
    return [{"round": round_index, "split": split, "case_id": r.case_id, "category": r.category,
             "category_name": CATEGORIES.get(r.category, ""), "question": redact(r.question, hidden),
             "gold": redact(r.gold, hidden), "prediction": redact(r.prediction, hidden), "f1": r.f1,
             "judge": r.correct, "error": redact(r.error or "", hidden)}
            for split, results in reported.items() for r in results]


def _columns(rows: list[dict]) -> dict[str, list[Any]]:
    return {key: [row[key] for row in rows] for key in rows[0]}


def log_tables(log: Any, record: Any, outcome: Any, reported: Mapping[str, Sequence[Any]], *,
               names: Mapping[str, str], traces: Mapping[str, str]) -> dict[str, int]:
    """Log a round's tables (those with rows) on its run; table → rows."""
    tables = {CANDIDATES: candidate_rows(record, outcome, names, traces), TRIALS: trial_rows(record),
              CASES: case_rows(record.round, reported)}
    for artifact, rows in tables.items():
        if rows:
            log.log_table(_columns(rows), artifact)
    return {artifact: len(rows) for artifact, rows in tables.items()}
