"""Rich tables the commands print (views over result data; no computation here)."""

from __future__ import annotations

from typing import Any

from rich.table import Table

from memopt.data.model import CATEGORIES

__all__ = ["category_table", "rounds_table", "usage_table", "mem0_check_table"]


def _cell(value: Any) -> str:
    return "–" if value is None else f"{value:.3f}"


def category_table(result: Any) -> Table:
    """F1 / EM / judge accuracy per LoCoMo category and overall, for a `RunResult`."""
    table = Table(title=f"{result.pipeline} · {result.data}" + (" · simulated" if result.simulated else ""))
    for column in ("category", "n", "F1", "EM", "judge"):
        table.add_column(column, justify="right" if column != "category" else "left")
    for cat, m in result.metrics.get("by_category", {}).items():
        table.add_row(f"{cat} {CATEGORIES.get(int(cat), '')}", str(m["n"]), _cell(m["f1"]), _cell(m["em"]),
                      _cell(m.get("judge")))
    m = result.metrics
    table.add_row("[bold]all", f"[bold]{m['n']}", f"[bold]{_cell(m['f1'])}", _cell(m["em"]), _cell(m.get("judge")))
    return table


def _errored(counts: dict[str, int] | None) -> str:
    if not counts:
        return "–"
    return "/".join(str(counts.get(split, "–")) for split in ("train", "val", "test"))


def rounds_table(summary: dict[str, Any]) -> Table:
    """F1 per round, errored cases, blamed ops, LM calls so far, prompt versions, for an optimize summary."""
    table = Table(title=f"{summary['experiment']} · {summary['pipeline']} · run {summary['run_id']}",
                  caption="errored: cases that errored in train/val/test [trials that errored beyond the limit]; "
                          "LM calls: asked so far, reporting included")
    for column in ("round", "val F1", "test F1", "errored", "blamed ops", "accepted", "LM calls", "prompt versions"):
        table.add_column(column, justify="right" if "F1" in column or column in ("round", "LM calls") else "left")
    base = summary["baseline"]
    table.add_row("0", _cell(base["val_f1"]), _cell(base["test_f1"]), _errored(base.get("errored")), "–", "start",
                  "", "")
    for r in summary["rounds"]:
        blamed = ", ".join(f"{op} {n}" for op, n in r["blamed_ops"].items()) or "–"
        versions = " ".join(f"{k.split('.', 1)[1]}@{v}" for k, v in sorted(r["prompt_versions"].items()))
        errored = _errored(r.get("errored")) + (f" [{r['trials_errored']}]" if r.get("trials_errored") else "")
        table.add_row(str(r["round"]), _cell(r["val_f1"]), _cell(r["test_f1"]), errored, blamed,
                      "yes" if r["accepted"] else "no", f"{r['lm_calls']:,}", versions)
    return table


def usage_table(summary: dict[str, Any]) -> Table:
    """LM usage per meter and in total: calls asked, made, from the cache, failed, tokens, cost."""
    budget = summary.get("budget") or {}
    cost_limit = f", ${budget['max_cost_usd']:g}" if budget.get("max_cost_usd") else ""
    table = Table(title="LM usage", caption=f"made: sent to the LM; cached: served from the reply cache (not billed). "
                  f"The budget ({budget.get('max_lm_calls', 0):,} calls{cost_limit}) covers "
                  f"{budget.get('covers', 'every call')}.")
    for column in ("LMs", "calls", "made", "cached", "failed", "tokens in", "out", "cost"):
        table.add_column(column, justify="left" if column in ("LMs", "cost") else "right")
    for meter, u in summary["usage"].items():
        name = "[bold]total" if meter == "total" else meter.replace("_", " ")
        table.add_row(name, f"{u['calls']:,}", f"{u['made']:,}", f"{u['cached']:,}", f"{u['errors']:,}",
                      f"{u['input_tokens']:,}", f"{u['output_tokens']:,}", u["cost"])
    return table


def mem0_check_table(result: dict[str, Any]) -> Table:
    """Per conversation and overall: what real Mem0 stored (units, updates, deletes, dated units) and the F1."""
    table = Table(title=f"real Mem0 {result['mem0_version']} · {result.get('config', 'config')} · simulated",
                  caption="dated: units holding an absolute date; relative: units still holding a relative one")
    for column in ("conversation", "units", "updates", "deletes", "dated", "relative", "F1"):
        table.add_column(column, justify="left" if column == "conversation" else "right", no_wrap=True)
    keys = ("units", "updates", "deletes", "units_with_absolute_dates", "units_with_relative_dates")
    for sample_id, stats in result["conversations"].items():
        table.add_row(sample_id, *(str(stats[k]) for k in keys), _cell(stats["f1"]))
    total = result["memory"]
    table.add_row("[bold]all", *(f"[bold]{total[k]}" for k in keys), f"[bold]{_cell(result['metrics']['f1'])}")
    return table
