"""Rich tables the commands print (views over result data; no computation here)."""

from __future__ import annotations

import re
from typing import Any

from rich.table import Table

from memopt.data.model import CATEGORIES

__all__ = ["category_table", "rounds_table", "markdown_tables", "usage_table", "mem0_check_table"]


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
    """F1 and judge accuracy per round, errored cases, blamed ops, the decision, knobs, LM calls so far, prompt
    versions, for an optimize summary; the gain of the best round over round 0 in the caption."""
    gain = summary.get("gain") or {}
    table = Table(title=f"{summary['experiment']} · {summary['pipeline']} · run {summary['run_id']}",
                  caption=f"best round {summary['final']['round']}: test F1 {_signed(gain.get('test_f1'))}, test "
                          f"judge {_signed(gain.get('test_judge'))} over round 0. errored: cases that errored in "
                          "train/val/test [trials that errored beyond the limit]; LM calls: asked so far, reporting "
                          "included")
    for column in ("round", "val F1", "test F1", "val judge", "test judge", "errored", "blamed ops", "accepted",
                   "knobs", "LM calls", "prompt versions"):
        right = "F1" in column or "judge" in column or column in ("round", "LM calls")
        table.add_column(column, justify="right" if right else "left")
    base = summary["baseline"]
    table.add_row("0", _cell(base["val_f1"]), _cell(base["test_f1"]), _cell(base.get("val_judge")),
                  _cell(base.get("test_judge")), _errored(base.get("errored")), "–", "start", "", "", "")
    for r in summary["rounds"]:
        blamed = ", ".join(f"{op} {n}" for op, n in r["blamed_ops"].items()) or "–"
        versions = " ".join(f"{k.split('.', 1)[1]}@{v}" for k, v in sorted(r["prompt_versions"].items()))
        errored = _errored(r.get("errored")) + (f" [{r['trials_errored']}]" if r.get("trials_errored") else "")
        knobs = " ".join(f"{k}={v}" for k, v in sorted((r.get("knobs") or {}).items())) or "–"
        table.add_row(str(r["round"]), _cell(r["val_f1"]), _cell(r["test_f1"]), _cell(r.get("val_judge")),
                      _cell(r.get("test_judge")), errored, blamed, "yes" if r["accepted"] else "no", knobs,
                      f"{r['lm_calls']:,}", versions)
    return table


def _signed(value: float | None) -> str:
    return "–" if value is None else f"{value:+.3f}"


def markdown_tables(text: str) -> list[Table]:
    """Rich tables of the Markdown tables in ``text`` (blank-line separated; ``<br>`` a line break, code marks
    dropped), for a terminal."""
    tables = []
    for block in text.strip().split("\n\n"):
        rows = [_markdown_cells(line) for line in block.strip().splitlines() if line.strip()]
        if len(rows) < 2:
            continue
        table = Table(show_lines=True)
        for header in rows[0]:
            table.add_column(header, overflow="fold")
        for row in rows[2:]:
            table.add_row(*row)
        tables.append(table)
    return tables


def _markdown_cells(line: str) -> list[str]:
    cells = re.split(r"(?<!\\)\|", line.strip().strip("|"))
    return [c.strip().replace("<br>", "\n").replace("\\|", "|").replace("`", "") for c in cells]


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
