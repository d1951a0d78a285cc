"""`memopt systems`: list the installed memory systems, or the declared operations of one."""

from __future__ import annotations

import sys

import typer

__all__ = ["systems"]


def systems(
    name: str = typer.Argument(None, help="Show this system's operations (stages, steering); default: list all."),
) -> None:
    """List the memory systems memopt can run (shipped and plug-ins), or one system's declared operations."""
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    from memopt.core.errors import MemoptError
    from memopt.systems import clash, system_class, system_names, system_source

    console = Console(soft_wrap=True)
    if name is not None:
        cls = system_class(name)
        table = Table(title=f"{name} · {system_source(name)}")
        for column in ("op", "kind", "phase", "stages", "steered by", "what it does"):
            table.add_column(column)
        for spec in cls.operations:
            table.add_row(spec.name, spec.kind, spec.phase, ", ".join(spec.stages), ", ".join(spec.steered_by) or "–",
                          escape(spec.description))
        console.print(table)
        knobs = ", ".join(f"{k} = {v}" for k, v in cls.defaults.items()) or "none"
        console.print(f"knobs: {knobs}; seed prompts: {cls.seed_prompts or 'memopt prompts/'}", highlight=False)
        return
    table = Table(title="memory systems")
    for column in ("name", "operations (LLM in bold)", "knobs", "from"):
        table.add_column(column)
    broken = 0
    for system in system_names():
        try:
            cls = system_class(system)
        except MemoptError as e:
            broken += 1
            table.add_row(system, f"[red]cannot load: {escape(str(e))}[/]", "", "")
            continue
        ops = " → ".join(f"[bold]{s.name}[/]" if s.is_llm else s.name for s in cls.operations)
        table.add_row(system, ops, ", ".join(cls.defaults) or "–", escape(system_source(system)))
        refused = clash(system)
        if refused is not None:
            broken += 1
            table.add_row(system, f"[red]refused: {escape(refused)}[/]", "", "")
    console.print(table)
    if broken:
        sys.exit(2)
