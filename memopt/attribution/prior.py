"""A system prior: what a user knows about the memory system whose graphs memopt did not make.

A YAML file (``memopt attribute TRACE --prior system.yaml``)::

    overview: |
      Our assistant summarises each chat into a running summary, keeps a user profile, and answers from both.
    stages:                         # op-name patterns (fnmatch, on the graph's own op name) → stage
      "summarizer.*": extraction
      "profile.extract_*": update
      "*.rerank*": retrieval

Without a prior, the stage of an op of a foreign graph is inferred from what it did (`memopt.trace.memtracebench`:
its category, then the variables it read, wrote, overwrote or deleted), and memtrace types a loss by what the
op did to the information (an overwrite is an UpdateError, a delete a DeletionError, a copy read and not kept
an ExtractionError). A stage the prior names overrides the inferred one (``category`` of the op node, and
``prior_stage``), and a copy such an op read and did not keep is typed by that stage. The first pattern that
matches wins. The overview is free text for LM-based methods and reports (kept as ``G.graph["prior"]``).
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import networkx as nx

from memopt.core.errors import ConfigError
from memopt.taxonomy import STAGES

__all__ = ["SystemPrior", "load_prior", "apply_prior"]


@dataclass(frozen=True)
class SystemPrior:
    """Op-name patterns → stage, and a free-text overview of the system."""

    stages: tuple[tuple[str, str], ...] = ()
    overview: str = ""

    def stage_of(self, op_name: str) -> str | None:
        """The stage the first matching pattern names, or None."""
        return next((stage for pattern, stage in self.stages if fnmatch.fnmatchcase(op_name, pattern)), None)

    def to_dict(self) -> dict[str, Any]:
        """JSON form."""
        return {"overview": self.overview, "stages": dict(self.stages)}


def load_prior(path: str | Path) -> SystemPrior:
    """A system prior from its YAML file; a bad key or stage is one `ConfigError` naming the file and key."""
    import yaml

    from memopt.core.files import load_yaml

    path = Path(path)
    if not path.is_file():
        raise ConfigError(f"--prior {path}: no such file (YAML: overview, stages: {{op-name pattern: stage}}).")
    try:
        raw = load_yaml(path.read_text(encoding="utf-8"))
    except (yaml.YAMLError, UnicodeDecodeError) as e:
        raise ConfigError(f"--prior {path}: not valid YAML ({type(e).__name__}).") from None
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        raise ConfigError(f"--prior {path}: expected a mapping with overview and stages, got {type(raw).__name__}.")
    unknown = sorted(set(raw) - {"overview", "stages"})
    if unknown:
        raise ConfigError(f"--prior {path}: unknown key {unknown[0]!r}; a prior has overview and stages.")
    overview = raw.get("overview") or ""
    if not isinstance(overview, str):
        raise ConfigError(f"--prior {path}: overview must be text, got {type(overview).__name__}.")
    stages = raw.get("stages") or {}
    if not isinstance(stages, dict):
        raise ConfigError(f"--prior {path}: stages must map op-name patterns to stages, got "
                          f"{type(stages).__name__}.")
    pairs = []
    for pattern, stage in stages.items():
        if not isinstance(stage, str) or stage not in STAGES:
            raise ConfigError(f"--prior {path}: stages.{pattern}: {stage!r} is not a stage; choose one of "
                              f"{', '.join(STAGES)}.")
        pairs.append((str(pattern), stage))
    return SystemPrior(tuple(pairs), overview.strip())


def apply_prior(G: nx.DiGraph, prior: SystemPrior) -> int:
    """Mark the ops of a foreign graph (not declared by its system) with the stages the prior names; the number
    marked. The prior is kept on the graph (``G.graph["prior"]``)."""
    declared = G.graph.get("operations") or {}
    marked = 0
    for _, d in G.nodes(data=True):
        if d.get("type") != "op" or d["operation"] in declared:
            continue
        stage = prior.stage_of(str(d.get("sc_op_name") or d["operation"]))
        if stage is not None:
            d["category"] = d["prior_stage"] = stage
            marked += 1
    G.graph["prior"] = prior.to_dict()
    return marked
