"""Reference pages made from the code, so they cannot drift: every command and option from the CLI's own metadata,
every experiment key from the pydantic model, the graph schema from its module docstring.

The docs build calls `expand` on every page (``docs/hooks.py``): a line ``<!-- reference:NAME -->`` is replaced by
the Markdown of NAME (``commands``, ``bench-commands``, ``experiment``, ``graph-schema``). Nothing here is imported by a
command.
"""

from __future__ import annotations

import inspect
import json
import re
import types
from typing import Any, Literal, Union, get_args, get_origin

__all__ = ["commands_markdown", "experiment_markdown", "graph_schema_markdown", "expand", "MARKERS",
           "EXPERIMENT_NOTES"]

_MARKER = re.compile(r"^<!-- reference:([a-z-]+) -->$", re.M)

# One line per experiment key that the model does not describe itself (a `Field(description=...)` wins over it).
# `tests/test_docs_site.py` fails when a key of the model has neither, or when a line here names no key.
EXPERIMENT_NOTES: dict[str, str] = {
    "name": "The experiment's name: run names and the summary use it.",
    "pipeline": "The memory system to optimize: a shipped one (`long_context`, `rag`, `mem0`, `evermemos`) or a "
                "plug-in (`memopt systems` lists them).",
    "data.source": "A LoCoMo or LongMemEval file, or a synthetic spec "
                   "(`synthetic:conversations=N,sessions=M,seed=S,hard_percent=P`).",
    "data.conversations": "Only these sample ids (default: every conversation of the source).",
    "data.split": "Train, val and test fractions, split by conversation.",
    "data.split_seed": "Seed of the split (`memopt bench feedback --resplit` sets it to each run's seed).",
    "lm.task": "The LM that runs the memory system: an LM spec (`sim`, `local`, `openai/gpt-4.1-mini`, "
               "`MODEL@http://host:port/v1`), or a list of specs of one model to load-balance.",
    "lm.judge": "The LM that grades answers and checks attributions (an LM spec or a list of them).",
    "lm.reflection": "The LM that writes new prompts (an LM spec or a list of them).",
    "lm.concurrency": "LM calls in flight at once, one number or one per role (`{task: 16, judge: 8}`); default 8 for "
                      "APIs and servers, 1 for `sim` and `local`.",
    "lm.timeout": "Seconds an LM call may take before it is retried.",
    "lm.num_retries": "Retries with backoff on rate limits (429), server errors, timeouts and dropped connections.",
    "lm.parse_retries": "New asks for a reply no adapter could parse.",
    "lm.cache": "The on-disk reply cache of real LMs (`$MEMOPT_CACHE_DIR`, else `.memopt/cache`).",
    "lm.engine": "How real providers are called: DSPy's LiteLLM engine, or DSPy's own default client.",
    "attribution.method": "A registered attribution method (`memopt plugins --kind attribution`).",
    "attribution.verify": "Confirm each blamed op by replaying it with an oracle correction.",
    "attribution.sample": "The most new attributions per round, a sample stratified by question category and blamed "
                          "op; `null` attributes every failure.",
    "attribution.replay": "Reuse the attribution of a case whose ops are byte-identical to when it was attributed.",
    "attribution.masked": "Also probe each failure blamed upstream for an answer-op fault behind it (one task and "
                          "one judge call per such failure).",
    "optimizer.name": "A registered optimizer (`memtrace`, `gepa`, `score_only`; `memopt plugins --kind "
                      "optimizers`).",
    "optimizer.feedback": "What the reflection LM reads, a registered feedback kind (`attribution`, `outcome`, "
                          "`score`, `empty`, `misleading`); default: the one the optimizer reads.",
    "optimizer.candidates": "Rewritten instructions asked of the reflection LM per op and round.",
    "optimizer.ops_per_round": "LLM ops rewritten per round.",
    "optimizer.trials": "Optuna trials per round, each a choice of candidates and knob values scored on val.",
    "optimizer.trial_batch": "Trials asked and scored at once (the batch, not the thread count, decides what TPE "
                             "sees).",
    "optimizer.search": "Knob values the trials choose among (`{top_k: [5, 10, 20]}`).",
    "optimizer.min_gain": "Val F1 a round must gain over the current prompts to be kept.",
    "optimizer.storage": "An Optuna storage (`postgresql://...`, `sqlite:///FILE.db`, `journal:FILE`) through which "
                         "`memopt worker` processes score the trials.",
    "optimizer.stop_on_repeat": "End the run when a round would see the prompts, knobs and feedback of an earlier one.",
    "optimizer.reuse_train": "After a rejected round, reuse the traced training run instead of running it again.",
    "rounds": "Optimization rounds after round 0 (which scores the starting prompts).",
    "budget.max_lm_calls": "The most LM calls of the whole run: task, judge, reflection and reporting, cached "
                           "replies included.",
    "budget.max_cost_usd": "The most dollars the run may be billed (LiteLLM's prices); `null` = no cost limit.",
    "max_error_rate": "Share of errored cases in an evaluation above which the round stops.",
    "seed": "Seed of SimLM, the reflection and Optuna's sampler.",
    "judge_check": "What a judge that fails its check before round 0 does (`memopt.judge.check`: clear-cut cases "
                   "and known pairs): `stop` ends the run with one error; `warn` goes on, with a warning every round.",
    "prompts": "Directory of starting prompts shaped `<dir>/<pipeline>/<op>.md` (default: the seed prompts).",
    "knobs": "Starting knob values (`{top_k: 10}`); names must be knobs of the pipeline.",
    "mlflow.experiment": "The MLflow experiment the runs are logged to.",
    "mlflow.tracking_uri": "The MLflow store (default: `$MLFLOW_TRACKING_URI`, else `sqlite:///mlflow.db`).",
    "mlflow.prompt_prefix": "Prompts register as `<prefix>.<pipeline>.<op>`: one prefix per person or stream on a "
                            "shared store.",
    "mlflow.traces": "Which train cases of a round become MLflow traces.",
    "mlflow.max_traces": "The most MLflow traces per round.",
    "confirm": "A real system that confirms the seed and best prompts on val and test (`null`: none).",
    "confirm.system": "The real system (Mem0, through `memopt attach`).",
    "confirm.offline": "SimLM on a loopback server, lexical embeddings and a temporary store instead of the config's "
                       "LLM, embedder and stores.",
    "confirm.config": "Your Mem0 config file (YAML or JSON); needed when `offline` is false.",
    "confirm.top_k": "Memories `Memory.search` returns per question.",
}


def _cell(text: str) -> str:
    """Text for a Markdown table cell: one line, pipes escaped, and ``<`` / ``*`` kept literal outside code spans."""
    parts = " ".join(text.split()).split("`")
    for i in range(0, len(parts), 2):  # even parts lie outside code spans
        parts[i] = parts[i].replace("<", "&lt;").replace("*", r"\*")
    return "`".join(parts).replace("|", r"\|")


def _commands(group: Any, path: list[str], parent: Any) -> list[tuple[list[str], Any, Any]]:
    """Every visible command under ``group`` as (path, command, context), in the order the CLI registered them."""
    ctx = group.context_class(group, info_name=path[-1], parent=parent)
    found = []
    for name, command in group.commands.items():
        if command.hidden:
            continue
        if hasattr(command, "commands"):
            found += _commands(command, [*path, name], ctx)
        else:
            found.append(([*path, name], command, command.context_class(command, info_name=name, parent=ctx)))
    return found


def _usage(path: list[str], command: Any) -> str:
    pieces = [" ".join(path)]
    for param in command.params:
        if param.param_type_name == "argument" and not param.hidden:
            name = param.name.upper() + ("..." if param.nargs == -1 else "")
            pieces.append(name if param.required else f"[{name}]")
    if any(p.param_type_name == "option" and not p.hidden for p in command.params):
        pieces.append("[OPTIONS]")
    return " ".join(pieces)


def commands_markdown(app: Any = None, *, only: str | None = None, skip: tuple[str, ...] = ()) -> str:
    """Every command of the `memopt` CLI as Markdown: a heading, its help, its usage and a table of its arguments
    and options (declarations, help, defaults, ranges and environment variables as ``--help`` prints them).
    ``only`` keeps the commands under one top-level name (``"bench"``), ``skip`` leaves those under others out."""
    import typer

    if app is None:
        from memopt.cli import app
    root = typer.main.get_command(app)
    lines: list[str] = []
    for path, command, ctx in _commands(root, ["memopt"], None):
        if (only is not None and path[1] != only) or path[1] in skip:
            continue
        lines += [f"### `{' '.join(path)}`", "", inspect.cleandoc(command.help or ""), "", "```text",
                  _usage(path, command), "```", ""]
        rows = [p.get_help_record(ctx) for p in command.params if not p.hidden]
        rows = [r for r in rows if r]
        if rows:
            lines += ["| argument or option | what it does |", "|---|---|"]
            lines += [f"| `{decl}` | {_cell(help_text)} |" for decl, help_text in rows]
            lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def _section_model(annotation: Any) -> Any:
    """The pydantic model of a section field (``DataConfig``, ``ConfirmConfig | None``), or None for a leaf."""
    from pydantic import BaseModel

    for candidate in (annotation, *get_args(annotation)):
        if isinstance(candidate, type) and issubclass(candidate, BaseModel):
            return candidate
    return None


def _type_text(annotation: Any) -> str:
    """An annotation as a reader of YAML would name it: ``int``, ``list[int]``, ``one of: failed, sample``."""
    origin = get_origin(annotation)
    if origin is Literal:
        return "one of: " + ", ".join(str(a) for a in get_args(annotation))
    if origin in (Union, types.UnionType):
        return " or ".join("null" if a is type(None) else _type_text(a) for a in get_args(annotation))
    if origin is not None:
        return f"{getattr(origin, '__name__', str(origin))}[{', '.join(_type_text(a) for a in get_args(annotation))}]"
    return getattr(annotation, "__name__", str(annotation))


def _default_text(value: Any) -> str:
    """A default as written in YAML (JSON's spelling for anything but plain text)."""
    return value if isinstance(value, str) else json.dumps(value)


def _limits(field: Any) -> str:
    """A field's constraints (``≥ 1``, ``≤ 100``, ``pattern ...``) from its metadata."""
    out = []
    for item in field.metadata:
        for attr, sign in (("gt", ">"), ("ge", "≥"), ("lt", "<"), ("le", "≤"), ("max_length", "length ≤"),
                           ("pattern", "matches")):
            value = getattr(item, attr, None)
            if value is not None:
                out.append(f"{sign} `{value}`" if attr == "pattern" else f"{sign} {value}")
    return ", ".join(out)


def _experiment_rows(model: Any, prefix: str) -> tuple[list[tuple[str, Any, Any]], list[tuple[str, Any]]]:
    """The leaf keys of ``model`` as (dotted key, field, default in YAML terms) and its sections as (key, model)."""
    from pydantic_core import PydanticUndefined

    leaves, sections = [], []
    for name, field in model.model_fields.items():
        key = f"{prefix}{name}"
        section = _section_model(field.annotation)
        if section is not None:
            sections.append((key, section))
            if field.default is None:  # an optional section: absent unless written
                leaves.append((key, field, None))
            continue
        default = PydanticUndefined if field.is_required() else field.get_default(call_default_factory=True)
        leaves.append((key, field, default))
    return leaves, sections


def _defaults_of(model: Any) -> dict[str, Any]:
    """The defaults of a section as the experiment file spells them (LM specs as spec strings), by field name."""
    try:
        return model().model_dump(mode="json")
    except Exception:  # a section with a required key has no default instance
        return {}


def _note(key: str, field: Any) -> str:
    return field.description or EXPERIMENT_NOTES.get(key, "")


def experiment_keys(model: Any = None, prefix: str = "") -> dict[str, str]:
    """Every key of the experiment file (dotted: ``optimizer.trials``) → its default as written in YAML
    (``required`` for a key without one)."""
    from pydantic_core import PydanticUndefined

    if model is None:
        from memopt.optimize.experiment import Experiment as model
    leaves, sections = _experiment_rows(model, prefix)
    dumped = _defaults_of(model)
    out = {}
    for key, _, default in leaves:
        name = key.rsplit(".", 1)[-1]
        if default is PydanticUndefined:
            out[key] = "required"
        else:
            out[key] = _default_text(dumped.get(name, default) if dumped else default)
    for key, section in sections:
        out.update(experiment_keys(section, f"{key}."))
    return out


def experiment_markdown(model: Any = None) -> str:
    """The experiment file's keys as Markdown, from the pydantic model: one table per section (key, type, default,
    limits, what it sets), the section's docstring above it."""
    from pydantic_core import PydanticUndefined

    if model is None:
        from memopt.optimize.experiment import Experiment as model
    defaults = experiment_keys(model)
    lines: list[str] = []

    def table(section: Any, prefix: str, title: str) -> None:
        leaves, sections = _experiment_rows(section, prefix)
        doc = _rst_to_markdown(inspect.cleandoc(section.__doc__ or ""))
        lines.extend([f"### {title}", "", doc, "", "| key | type | default | limits | what it sets |",
                      "|---|---|---|---|---|"])
        for key, field, default in leaves:
            annotation = field.annotation
            if _section_model(annotation) is not None:
                type_text = f"section (`{key}.*`) or null"
            else:
                type_text = _type_text(annotation)
            shown = "required" if default is PydanticUndefined else f"`{defaults[key]}`"
            lines.append(f"| `{key}` | {_cell(type_text)} | {shown} | {_cell(_limits(field))} | "
                         f"{_cell(_note(key, field))} |")
        lines.append("")
        for key, sub in sections:
            table(sub, f"{key}.", f"`{key}`")

    table(model, "", "Top level")
    return "\n".join(lines).rstrip() + "\n"


def _rst_to_markdown(text: str) -> str:
    """A docstring's reStructuredText literals (````x````) as Markdown code (```x```)."""
    return text.replace("``", "`")


def graph_schema_markdown() -> str:
    """The evolution graph's schema as Markdown: the schema version, the module docstring of `memopt.trace.graph`
    (graph, node and edge attributes) and its query functions with their one-line docstrings."""
    from memopt.trace import graph

    doc = _rst_to_markdown(inspect.cleandoc(graph.__doc__ or ""))
    lines = [f"Schema version: **{graph.SCHEMA_VERSION}** (`memopt.trace.graph.SCHEMA_VERSION`).", "", doc, "",
             "| query (`memopt.trace.graph`) | what it returns |", "|---|---|"]
    for name in graph.__all__:
        value = getattr(graph, name)
        if callable(value):
            first = _rst_to_markdown(inspect.cleandoc(value.__doc__ or "").split("\n\n")[0])
            lines.append(f"| `{name}` | {_cell(first)} |")
    return "\n".join(lines) + "\n"


MARKERS = {
    "commands": lambda: commands_markdown(skip=("bench",)),
    "bench-commands": lambda: commands_markdown(only="bench"),
    "experiment": experiment_markdown,
    "graph-schema": graph_schema_markdown,
}


def expand(markdown: str) -> str:
    """``markdown`` with each ``<!-- reference:NAME -->`` line replaced by the generated Markdown of NAME; an unknown
    name is a `ValueError` (a typo must not leave a page empty)."""

    def generated(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in MARKERS:
            raise ValueError(f"<!-- reference:{name} -->: no such reference (known: {', '.join(MARKERS)})")
        return MARKERS[name]().rstrip("\n")

    return _MARKER.sub(generated, markdown)
