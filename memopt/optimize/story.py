"""What a round tried and decided, and the run's story, in words: candidates, decisions, commit messages, Markdown.

Views over the data a round produced (no LM calls, no MLflow): `candidates_of` lists every proposed
instruction with its diff and the best val F1 and knobs of the trials that used it; `trials_of` every
Optuna trial; `decision_of` says why the round kept or rejected its best trial; `commit_message` is
the prompt version's message (what changed, why, the val F1 it moved; an optional one-line rationale);
`round_markdown` is ``round.md``; `run_description` the parent run's Markdown description, opening with
its result (`result_line`), `round_description` a round run's; `parent_metrics` the per-round metrics of the
parent run (its line charts), `result_metrics` its result (baseline, best, gain: columns of the runs list);
`category_key` names a question category in metric names (``1-multi-hop``).
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from typing import Any

from memopt.data.model import CATEGORIES

__all__ = ["candidates_of", "trials_of", "decision_of", "commit_message", "round_markdown", "run_description",
           "parent_metrics", "describe_config", "TRACED_NOTE", "result_line", "result_metrics", "round_description",
           "category_key"]

TRACED_NOTE = ("Traced cases (each round's Traces tab, the experiment's Quality page) are a pick of mostly *failed* "
               "train cases, so their `traced_case.f1` / `traced_case.judge` averages are far below the run's score; "
               "the run's scores are the `rounds/val.f1` / `rounds/test.f1` curves of the parent run.")

def _diff(old: str, new: str, op: str) -> str:
    return "\n".join(difflib.unified_diff(old.splitlines(), new.splitlines(), f"{op} (current)", f"{op} (candidate)",
                                          lineterm=""))


def describe_config(ops: Mapping[str, int], knobs: Mapping[str, Any]) -> str:
    """A trial's configuration in words: ``extract #2, update current, top_k=10``."""
    parts = [f"{op} #{i}" if i else f"{op} current" for op, i in sorted(ops.items())]
    return ", ".join(parts + [f"{k}={v}" for k, v in sorted(knobs.items())]) or "current"


def trials_of(tried: list[dict]) -> list[dict[str, Any]]:
    """Every trial of the round: number, the candidate per op (0 = current instruction), knobs, val F1."""
    return [{"trial": n, "ops": dict(t["ops"]), "knobs": dict(t["knobs"]), "val_f1": t["val_f1"],
             "errored": bool(t.get("errored")), "config": describe_config(t["ops"], t["knobs"])}
            for n, t in enumerate(tried, start=1)]


def candidates_of(candidates: Mapping[str, list[str]], current: Mapping[str, str],
                  tried: list[dict]) -> list[dict[str, Any]]:
    """Every proposed instruction: op, number, diff against the current one, best val F1 and knobs of its trials."""
    out = []
    for op, texts in sorted(candidates.items()):
        for i, text in enumerate(texts, start=1):
            used = [t for t in tried if t["ops"].get(op) == i and t["val_f1"] is not None]
            best = max(used, key=lambda t: t["val_f1"], default=None)
            out.append({"op": op, "candidate": i, "diff": _diff(current.get(op, ""), text, op),
                        "trials": len(used), "val_f1": best["val_f1"] if best else None,
                        "knobs": dict(best["knobs"]) if best else None})
    return out


def decision_of(accepted: bool, tried: list[dict], chosen_f1: float, current_f1: float, min_gain: float,
                knobs: Mapping[str, Any]) -> str:
    """Why the round kept its best trial or the current prompts, in one sentence."""
    scored = [t for t in trials_of(tried) if t["val_f1"] is not None]
    if not scored:
        return f"kept the current prompts: no trial was scored ({len(tried)} errored or none ran)"
    best = max(scored, key=lambda t: (t["val_f1"], -t["trial"]))
    gain = f" + min_gain {min_gain:g}" if min_gain else ""
    if accepted:
        return (f"kept trial {best['trial']} ({best['config']}): val F1 {chosen_f1:.3f} beats the current "
                f"{current_f1:.3f}{gain}")
    others = [t for t in scored if any(t["ops"].values()) or t["knobs"] != dict(knobs)]
    if not others:
        return "kept the current prompts: no candidate trial was scored"
    top = max(others, key=lambda t: (t["val_f1"], -t["trial"]))
    return (f"kept the current prompts: the best candidate trial {top['trial']} ({top['config']}) scored val F1 "
            f"{top['val_f1']:.3f}, not above the current {current_f1:.3f}{gain}")


def commit_message(op: str, why: str, round_index: int, before: float | None, after: float | None,
                   rationale: str = "") -> str:
    """A prompt version's commit message: the round, why the op was rewritten, the val F1 it moved, the rationale."""
    moved = f"; val F1 {before:.3f} → {after:.3f}" if before is not None and after is not None else ""
    text = f"round {round_index}: rewrote {op} after {why}{moved}"
    return f"{text}. {rationale.strip()}" if rationale.strip() else text


def _num(value: Any) -> str:
    return "–" if value is None else f"{value:.3f}"


def _signed(a: Any, b: Any) -> str:
    return "–" if a is None or b is None else f"{b - a:+.3f}"


def _counts(counts: Mapping[str, int]) -> str:
    return ", ".join(f"{k} {v}" for k, v in counts.items()) or "—"


def round_markdown(record: Any, before: Mapping[str, str], after: Mapping[str, str], knob_notes: list[str]) -> str:
    """``round.md``: scores, blame, the decision, every candidate with its diff and val score, the feedback."""
    lines = [f"# Round {record.round}", "",
             f"- val F1 {_num(record.val.get('f1'))}, test F1 {_num((record.test or {}).get('f1'))}, "
             f"val judge {_num(record.val.get('judge'))}, test judge {_num((record.test or {}).get('judge'))}",
             f"- decision: {record.decision or ('accepted' if record.accepted else 'starting prompts')}",
             f"- knobs: {', '.join(f'{k}={v}' for k, v in sorted(record.knobs.items())) or '—'}",
             f"- blamed ops: {_counts(record.blamed_ops)}; answer faults behind them (`attribution.masked`): "
             f"{(record.attribution or {}).get('masked', 0)}", *knob_notes,
             f"- failures by error type: {_counts(record.failures_by_type)}",
             f"- candidates {record.candidates}, trials {record.trials} ({record.trials_errored} errored), "
             f"LM calls so far {record.lm_calls}", f"- errored cases: {_counts(record.errored)}; failures not "
             f"attributed (a judge call failed): {record.attribution_errors}", ""]
    for op in sorted(after):
        if before.get(op) != after[op]:
            diff = difflib.unified_diff(before.get(op, "").splitlines(), after[op].splitlines(),
                                        f"{op} (before)", f"{op} (after)", lineterm="")
            lines += [f"## Prompt diff: {op}", "", "```diff", *diff, "```", ""]
    if record.trials_log:
        lines += ["## Trials", "", "| trial | configuration | val F1 |", "|---|---|---|"]
        lines += [f"| {t['trial']} | {t['config']} | {'errored' if t['errored'] else _num(t['val_f1'])} |"
                  for t in record.trials_log]
        lines.append("")
    for c in record.proposals:
        knobs = ", ".join(f"{k}={v}" for k, v in sorted((c["knobs"] or {}).items())) or "—"
        lines += [f"## Candidate {c['op']} #{c['candidate']}: best val F1 {_num(c['val_f1'])} "
                  f"({c['trials']} trials; knobs {knobs})", "", "```diff", c["diff"] or "(same as the current)", "```",
                  ""]
    for op, text in record.feedback.items():
        lines += [f"## Feedback: {op}", "", "```", text, "```", ""]
    return "\n".join(lines)


def parent_metrics(record: Any, best_val: float) -> dict[str, Any]:
    """The parent run's metrics of one round (logged at step = round, in the UI's ``rounds`` chart section, first):
    val / test F1 and judge, best val F1 so far."""
    test = record.test or {}
    return {"rounds/val": {"f1": record.val.get("f1"), "judge": record.val.get("judge")},
            "rounds/test": {"f1": test.get("f1"), "judge": test.get("judge")}, "rounds/best": {"val_f1": best_val}}


_SCORES = ("val_f1", "test_f1", "val_judge", "test_judge")


def result_line(summary: Mapping[str, Any]) -> str:
    """The run's result in one line, what its description opens with: ``test F1 0.245 → 0.610 (+0.365) in 9,233
    calls`` (val F1 when there is no test split)."""
    base, final = summary["baseline"], summary["final"]
    split = "test" if base.get("test_f1") is not None and final.get("test_f1") is not None else "val"
    before, after = base[f"{split}_f1"], final[f"{split}_f1"]
    line = f"{split} F1 {_num(before)} → {_num(after)} ({_signed(before, after)}) in {summary['lm_calls']:,} calls"
    if summary.get("status", "FINISHED") != "FINISHED":
        line += f" · {summary['status']}"
    return line


def run_description(summary: Mapping[str, Any], *, data: str, sizes: tuple[int, int, int], lms: str,
                    optimizer: str, prompts: Mapping[str, int],
                    versions: Mapping[int, Mapping[str, int]] | None = None, best: str = "") -> str:
    """The parent run's Markdown description: the result first (`result_line`), the run's best prompt versions (by
    number, so they stay its own whoever holds ``@best`` later) and what became of ``@best`` (``best``), then what
    ran, baseline / best / gain, each round's decision and prompt changes (with a link that opens the prompt at its
    previous version, so MLflow's Compare shows the old text on the left)."""
    base, final = summary["baseline"], summary["final"]
    lines = [f"**{result_line(summary)}** · best round {final['round']} of {len(summary['rounds'])}", ""]
    if prompts:
        named = ", ".join(f"`prompts:/{name}/{v}`" for name, v in sorted(prompts.items()))
        lines += [f"This run's best prompts: {named}" + (f"; `@best` {best}" if best else "") + ".", ""]
    lines += [f"**memopt optimize** · experiment `{summary['experiment']}` · pipeline `{summary['pipeline']}` · "
              f"status {summary['status']}", "",
              f"Data `{data}`: {sizes[0]} train / {sizes[1]} val / {sizes[2]} test conversations. "
              f"Optimizer: {optimizer}. LMs: {lms}.", "",
              "| | val F1 | test F1 | val judge | test judge |", "|---|---|---|---|---|",
              f"| baseline (round 0) | {_num(base['val_f1'])} | {_num(base['test_f1'])} | {_num(base['val_judge'])} | "
              f"{_num(base['test_judge'])} |",
              f"| best (round {final['round']}) | {_num(final['val_f1'])} | {_num(final['test_f1'])} | "
              f"{_num(final['val_judge'])} | {_num(final['test_judge'])} |",
              "| gain | " + " | ".join(_signed(base[k], final[k]) for k in _SCORES) + " |", ""]
    knobs = ", ".join(f"{k}={v}" for k, v in sorted(summary["best_knobs"].items()))
    if knobs:
        lines += [f"Best knobs: {knobs}.", ""]
    if summary.get("stopped"):
        lines += [f"Stopped: {summary['stopped']}.", ""]
    lines += ["### Rounds", ""]
    for r in summary["rounds"]:
        lines.append(f"- **round {r['round']}** (val F1 {_num(r['val_f1'])}): {r.get('decision') or '—'}")
        before = (versions or {}).get(r["round"] - 1, {})
        for op, message in r.get("commit_messages", {}).items():
            name = next((n for n in r["prompt_versions"] if n.endswith(f".{op}")), "")
            old, new = before.get(name), r["prompt_versions"].get(name)
            compare = f" ([v{old} → v{new}](#/prompts/{name}?promptVersion={old}), then Compare)" if old and new else ""
            lines.append(f"  - {message}{compare}")
    lines += ["", TRACED_NOTE]
    return "\n".join(lines)


def result_metrics(summary: Mapping[str, Any]) -> dict[str, float | None]:
    """The parent run's result as metrics the runs list can show side by side: ``result/<score>.baseline``,
    ``.best`` and ``.gain`` for val / test F1 and judge accuracy (names that sort together, in that order)."""
    base, final, gain = summary["baseline"], summary["final"], summary["gain"]
    return {f"result/{score}.{part}": value for score in ("test_f1", "val_f1", "test_judge", "val_judge")
            for part, value in (("baseline", base.get(score)), ("best", final.get(score)), ("gain", gain.get(score)))}


def category_key(category: str | int) -> str:
    """A question category as a metric name part: its number and name (``1-multi-hop``), the number alone when
    it has no name."""
    name = CATEGORIES.get(int(category)) if str(category).isdigit() else None
    slug = "-".join(name.replace("/", " ").split()) if name else ""
    return f"{category}-{slug}" if slug else str(category)


def round_description(record: Any, prompts: Mapping[str, int], *, traces: int = 0, reflections: int = 0) -> str:
    """A round run's Markdown description: its scores and decision first, then the prompt versions it ended with
    and what it logged."""
    test = (record.test or {}).get("f1")
    lines = [f"**round {record.round}: val F1 {_num(record.val.get('f1'))}"
             + (f", test F1 {_num(test)}" if test is not None else "") + "** · "
             + (record.decision or ("starting prompts" if not record.round else
                                    "accepted" if record.accepted else "kept the current prompts")), ""]
    if prompts:
        changed = set(record.changed_ops)
        lines += ["Prompts after the round: " + ", ".join(
            f"`prompts:/{name}/{v}`" + (" (changed)" if name.rsplit(".", 1)[-1] in changed else "")
            for name, v in sorted(prompts.items())) + ".", ""]
    if record.blamed_ops:
        lines += [f"Blamed: {_counts(record.blamed_ops)}; failures by type: {_counts(record.failures_by_type)}.", ""]
    logged = [f"{traces} case traces" if traces else "", f"{reflections} reflection traces" if reflections else ""]
    if any(logged):
        lines += [" and ".join(x for x in logged if x) + " (the **Traces** tab); every candidate and trial in "
                  "`candidates.json` / `trials.json`, the story in `round.md`.", ""]
    return "\n".join(lines)
