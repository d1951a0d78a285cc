"""Rich tables the commands print (views over result data; no computation here)."""

from __future__ import annotations

from typing import Any

from rich.table import Table

from memopt.data.model import CATEGORIES

__all__ = ["category_table", "rounds_table", "mem0_check_table"]


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


def rounds_table(summary: dict[str, Any]) -> Table:
    """F1 per round, blamed ops, prompt versions, for an optimize summary."""
    table = Table(title=f"{summary['experiment']} · {summary['pipeline']} · run {summary['run_id']}")
    for column in ("round", "val F1", "test F1", "blamed ops", "accepted", "prompt versions"):
        table.add_column(column, justify="right" if "F1" in column or column == "round" else "left")
    base = summary["baseline"]
    table.add_row("0", _cell(base["val_f1"]), _cell(base["test_f1"]), "–", "start", "")
    for r in summary["rounds"]:
        blamed = ", ".join(f"{op} {n}" for op, n in r["blamed_ops"].items()) or "–"
        versions = " ".join(f"{k.split('.', 1)[1]}@{v}" for k, v in sorted(r["prompt_versions"].items()))
        table.add_row(str(r["round"]), _cell(r["val_f1"]), _cell(r["test_f1"]), blamed,
                      "yes" if r["accepted"] else "no", versions)
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
