"""Rich tables the commands print (views over result data; no computation here)."""

from __future__ import annotations

from typing import Any

from rich.table import Table

from memopt.data.model import CATEGORIES

__all__ = ["category_table"]


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
