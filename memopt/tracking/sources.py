"""What an optimize run logged, read back: its best prompts and knobs, the data it saw; and the same for a directory.

A *source* of tuned prompts is a prompts directory ``<dir>/<pipeline>/<op>.md`` (what ``memopt export --format
text`` writes) or the id of an optimize run, whose parent run holds the artifact directory ``best_prompts/`` in
the same shape, the param ``pipeline``, ``best_knobs.json``, ``summary.json`` and ``experiment.json``. The MLflow
store is ``tracking_uri``, else ``$MLFLOW_TRACKING_URI``, else ``sqlite:///mlflow.db``. `memopt export` and
`memopt check-prompts` read their source here; the formats and the check themselves are `memopt.export`'s.
"""

from __future__ import annotations

import re
import tempfile
from pathlib import Path

from memopt.core.errors import ConfigError, DataError
from memopt.core.files import read_json, read_text
from memopt.data.model import Conversation
from memopt.data.source import load_data, select
from memopt.export.check import CheckReport, TrainingData, check_prompts
from memopt.export.formats import load_directory
from memopt.export.knobs import Knobs, defaults
from memopt.export.knobs import load_knobs as directory_knobs
from memopt.optimize.experiment import Experiment
from memopt.systems import prompts as prompt_files
from memopt.tracking.store import download_artifacts, run_info

__all__ = ["load_source", "load_knobs", "run_data", "check_source"]

_PATH_LIKE = re.compile(r"[/\\~]|^\.")


def _run_prompts(run_id: str, pipeline: str | None, tracking_uri: str | None) -> tuple[str, dict[str, str]]:
    logged = run_info(run_id, tracking_uri)["params"].get("pipeline")
    if pipeline and logged and pipeline != logged:
        raise ConfigError(f"run {run_id} optimized pipeline {logged!r}, not {pipeline!r}; drop --pipeline.")
    with tempfile.TemporaryDirectory(prefix="memopt-export-") as tmp:
        local = download_artifacts(run_id, "best_prompts", tmp, tracking_uri)
        return load_directory(local, pipeline or logged)


def load_source(source: str | Path, *, pipeline: str | None = None,
                tracking_uri: str | None = None) -> tuple[str, dict[str, str]]:
    """The pipeline and its instructions (op → text) from a prompts directory or an optimize run id."""
    text = str(source)
    path = Path(text).expanduser()
    if path.is_dir():
        return load_directory(path, pipeline)
    if path.exists() or _PATH_LIKE.search(text):
        raise ConfigError(f"{text}: no such prompts directory (expected <dir>/<pipeline>/<op>.md), "
                          "and not an MLflow run id.")
    return _run_prompts(text, pipeline, tracking_uri)


def load_knobs(source: str | Path, pipeline: str, *, tracking_uri: str | None = None) -> Knobs:
    """The knobs of a prompts directory or an optimize run (`memopt.export.knobs`)."""
    path = Path(str(source)).expanduser()
    if path.is_dir():
        return directory_knobs(path, pipeline)
    return _run_knobs(str(source), pipeline, tracking_uri)


def _run_knobs(run_id: str, pipeline: str, tracking_uri: str | None) -> Knobs:

    with tempfile.TemporaryDirectory(prefix="memopt-knobs-") as tmp:
        knobs = download_artifacts(run_id, "best_knobs.json", tmp, tracking_uri, missing_ok=True)
        summary = download_artifacts(run_id, "summary.json", tmp, tracking_uri, missing_ok=True)
        if knobs is None:  # a run that never reached its end: the pipeline's defaults, said so
            return Knobs(defaults(pipeline).values, run_id, {}, "defaults (the run logged no best_knobs.json)")
        values = read_json(knobs, missing="missing")
        found = read_json(summary, missing="missing") if summary is not None else {}
    final, base = found.get("final") or {}, found.get("baseline") or {}
    scores = {"val_f1": final.get("val_f1"), "test_f1": final.get("test_f1"), "seed_val_f1": base.get("val_f1"),
              "seed_test_f1": base.get("test_f1")}
    return Knobs({**defaults(pipeline).values, **{k: int(v) for k, v in values.items()}}, run_id, scores, "run")


def run_data(run_id: str, tracking_uri: str | None = None) -> list[Conversation] | None:
    """The conversations an optimize run saw (every split), from its ``experiment.json``; None when it has none."""
    with tempfile.TemporaryDirectory(prefix="memopt-check-") as tmp:
        path = download_artifacts(run_id, "experiment.json", tmp, tracking_uri, missing_ok=True)
        if path is None:
            return None
        experiment = Experiment.model_validate_json(Path(path).read_text(encoding="utf-8"))
    _, conversations = load_data(experiment.data.source)
    return select(conversations, experiment.data.conversations)


def check_source(source: str, *, pipeline: str | None = None, data: str | None = None, seed_dir: str | None = None,
                 tracking_uri: str | None = None) -> tuple[str, dict[str, str], CheckReport]:
    """Check the prompts of a prompts directory or an optimize run against the seed prompts and the run's data.

    ``data`` (a data source, as ``memopt optimize --data``) names the conversations to look for; for a run
    id it defaults to the data of the run's experiment.
    """
    name, instructions = load_source(source, pipeline=pipeline, tracking_uri=tracking_uri)
    seed_root = Path(seed_dir) if seed_dir else prompt_files.SEED_PROMPTS

    if seed_dir and not seed_root.is_dir():
        raise ConfigError(f"--seed-prompts {seed_dir}: no such directory; give the prompts directory the tuned "
                          "prompts started from (its <pipeline>/<operation>.md files), or leave it out.")

    seed = None
    if (seed_root / name).is_dir():
        try:
            seed = {op: read_text(p, missing="no such file.") for op in instructions
                    if (p := prompt_files.prompt_path(name, op, seed_root)).is_file()}
        except DataError as e:
            option = "--seed-prompts: " if seed_dir else "seed prompt: "
            raise DataError(f"{option}{e} Save it as UTF-8 text, or pass another --seed-prompts directory.") from None

    conversations, missing = None, None
    if data is not None:
        conversations = load_data(data)[1]
    elif not Path(str(source)).expanduser().is_dir():
        try:
            conversations = run_data(str(source), tracking_uri)
        except (ConfigError, DataError) as e:  # the run's data moved: say so, check the rest
            missing = f"the run's data could not be read ({e}); pass --data to check leakage"
    found = TrainingData.of(conversations) if conversations is not None else None
    report = check_prompts(name, instructions, seed=seed, data=found)
    if missing:
        report.notes.append(missing)
    return name, instructions, report
