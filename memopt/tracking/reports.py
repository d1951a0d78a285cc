"""Diagnostic reports of an `optimize` run, as artifacts of its parent run, and read back for `memopt report`.

Round 0 scores the starting prompts and attributes nothing; round 1 attributes their failures on the train split.
So the run gets two reports (`memopt.report`), each a folder of ``report.html``, ``report.md``, ``report.json``
and ``cases/<case id>.html`` (the graph views of the representative cases):

- ``report/round-0/``: the starting prompts' failures, as round 1 attributed them, logged when round 1 is scored;
- ``report/final/``: the failures the last round attributed (of the prompts it started from), with the failures
  by error type of every round, logged when the run ends.

`RunReports` hears the recorder's events (`memopt.tracking.recorder`); a report that cannot be built is a
warning and a run tag (``memopt.report_error``), never the end of the run. `markdown` is the line the run's
description links them with. `fetch_report` downloads a logged report folder (`memopt report RUN_ID`).
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from memopt.core.errors import ConfigError, one_line

__all__ = ["REPORT_ARTIFACT", "REPORT_ROUNDS", "RunReports", "fetch_report"]

REPORT_ARTIFACT = "report"
REPORT_ROUNDS = ("round-0", "final")
_log = logging.getLogger(__name__)


class RunReports:
    """Builds and logs an optimize run's two reports (see the module docstring)."""

    def __init__(self) -> None:
        self.rounds: list[dict[str, Any]] = []
        self.last: tuple[Any, Any, str] | None = None  # the last round's record, outcome and pipeline
        self.logged: list[str] = []
        self.flagged: frozenset[str] = frozenset()

    def round_scored(self, store: Any, record: Any, outcome: Any, pipeline: str) -> None:
        """Note the round's failures; round 1's are the starting prompts': log ``report/round-0``."""
        if outcome is None:
            return
        self.rounds.append({"round": record.round, "failures": dict(record.failures_by_type)})
        self.last = (record, outcome, pipeline)
        if record.round == 1:
            self._log(store, "round-0", record, outcome, pipeline, "the starting prompts (round 0)",
                      "round 1's attribution of the starting prompts' failures on the train split")

    def run_ending(self, store: Any) -> None:
        """Log ``report/final`` from the last round that attributed failures."""
        if self.last is None:
            return
        record, outcome, pipeline = self.last
        self._log(store, "final", record, outcome, pipeline, f"the final round (round {record.round})",
                  f"round {record.round}'s attribution of the failures of the prompts it started from, on the train "
                  "split")

    def markdown(self) -> str:
        """The description's line linking the reports (empty when none was logged)."""
        if not self.logged:
            return ""
        links = ", ".join(f"`{REPORT_ARTIFACT}/{name}/report.html`" for name in self.logged)
        return (f"\n\n**Diagnostic reports** (artifacts of this run): {links}; `memopt report <run id> --round "
                f"{self.logged[0].removeprefix('round-')}` writes one where you are.\n")

    def _log(self, store: Any, name: str, record: Any, outcome: Any, pipeline: str, what: str, source: str) -> None:
        from memopt.report import build_report, diagnosis_of_cases, report_files

        try:
            diagnosis = diagnosis_of_cases(outcome.attributions, source=source, flagged=self.flagged)
            diagnosis.rounds = list(self.rounds) if name == "final" else []
            diagnosis.cost = {f"round_{k}": v for k, v in (record.attribution or {}).items()}
            report = build_report(diagnosis, title=f"Why {pipeline} answered wrong: {what}")
            files = report_files(report, diagnosis)
        except Exception as e:  # noqa: BLE001 — a report is never worth a run
            _log.warning("the %s report was not built: %s", name, one_line(e))
            store.set_tags({"memopt.report_error": f"{name}: {one_line(e)}"})
            return
        for file, text in files.items():
            store.log_text(text, f"{REPORT_ARTIFACT}/{name}/{file}")
        self.logged.append(name)


def fetch_report(run_id: str, round_name: str, dst: str | Path, tracking_uri: str | None = None) -> Path:
    """Download the report folder ``report/<round_name>`` of an optimize run into ``dst``; its local path."""
    from memopt.tracking.store import check_run_id, download_artifacts

    if round_name not in REPORT_ROUNDS:
        raise ConfigError(f"--round {round_name}: an optimize run logs the reports {', '.join(REPORT_ROUNDS)} "
                          "(round 0's and the final round's).")
    check_run_id(run_id)
    found = download_artifacts(run_id, f"{REPORT_ARTIFACT}/{round_name}", dst, tracking_uri, missing_ok=True)
    if found is None:
        raise ConfigError(f"MLflow run {run_id} has no {REPORT_ARTIFACT}/{round_name}/: pass the parent run of a "
                          "`memopt optimize` (its id is printed at the end), whose rounds attributed failures.")
    return Path(found)
