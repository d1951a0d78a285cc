"""MLflow tracking of `optimize` experiments: one parent run per experiment, one nested run per round.

The package observes a run, it is never called by the loop: `memopt.optimize.loop` emits typed events
(`memopt.optimize.events`) and `Tracker` / `NullTracker` turn them into store calls (`recorder.py`).
Modules: `store.py` (where the store is, reading runs, every call guarded), `entries.py` (values
made safe), `runs.py` (parent and round runs), `null.py` (a tracker that records nothing),
`prompts.py` (the prompt registry), `recorder.py` (events → runs), `artifacts.py` (what a round and
a run log), `traces.py` and `spans.py` (cases as MLflow traces), `reflections.py` (each proposal as a
trace), `tables.py` (candidates, trials and cases as MLflow tables), `views.py` (the runs list's result
columns, links into the UI), `provenance.py` (the code version of a run).

Contract:

- **Store.** The tracking URI is the argument, else ``$MLFLOW_TRACKING_URI``, else
  ``sqlite:///mlflow.db`` (MLflow's default; a new experiment keeps its artifacts in ``./mlruns``).
  `Tracker` sets MLflow's process-wide tracking URI to it, because MLflow's prompt linking reads that
  one. Readers (`run_info`, `download_artifacts`) never create a store: a missing run, or a
  ``sqlite:`` file that does not exist, is a `ConfigError` naming the run id, the URI and how the URI
  was chosen.
- **Runs.** `Tracker.start` creates the experiment if needed and a parent run tagged
  ``memopt.kind=optimize``; `Tracker.round` opens a nested run ``round-<i>`` (or the name given)
  tagged ``memopt.round`` and ``memopt.kind=round``, finished FINISHED, FAILED (an exception
  escaped) or KILLED (interrupted). Param values are stringified (dicts and lists as JSON) and cut
  to MLflow's 6000 characters, tag values to 8000. Metrics are flattened (``{"val": {"f1": 0.5}}``
  → ``val.f1``); None is skipped, another non-number is skipped with a warning.
  Run ids given by a user (``--resume``, ``export RUN_ID``) must look like run ids (`check_run_id`).
- **Parallel runs.** A fresh ``sqlite:`` store is created (MLflow's schema migration) under a file
  lock next to the database (``mlflow.db.lock``, `store_lock`), so optimize runs started together
  on a new store all succeed; experiment creation and prompt registration take the same lock.
- **Prompts.** `RoundLog.register_prompts` registers ``<scope>.<pipeline>.<op>`` (the scope: the
  experiment's name, or ``mlflow.prompt_prefix``) in the MLflow prompt registry, a new version only
  for a text the name does not hold yet (tags ``round``, ``parent_version``, ``memopt.created_by``;
  the commit message one string, or one per op), links every version the round used to the round's
  run and the prompt to the run's experiment (MLflow's ``_mlflow_experiment_ids`` prompt tag, so the
  experiment's Prompts tab lists it) and tags the version ``memopt.rounds.<run id>``;
  `Tracker.claim_best` moves ``@best`` only to a run that beats its holder on the same data and task
  model (`memopt.tracking.prompts`). The check and the registration hold the store lock, so identical
  prompts of parallel runs share one version. Prompt text is stored verbatim, never masked: a prompt
  that holds an LM credential is refused (`check_prompt_secret`).
- **Story of the run.** `Tracker.describe` sets the parent run's Markdown description
  (``mlflow.note.content``); `Tracker.log_datasets` logs the data splits as MLflow dataset inputs;
  `log_table` logs a table ``mlflow.load_table`` reads back; the experiment keeps a shared view of its
  runs with their result columns (`memopt.tracking.views`).
- **Secrets.** Every param, tag, metric name, text, dict and commit message passes through
  `memopt.lm.redaction.redact`, the one masking rule: URI passwords (up to a URI's last ``@``), the
  environment's credentials (``*_API_KEY``, ``*_TOKEN``, ``*_SECRET``, ``*PASSWORD``, ... of at least 8
  characters) and the passwords memopt was given, in every form; param and tag keys that name a secret
  (``api_key``, ``secret``, ``password``, ``credential``, ``token`` as a word, so ``max_tokens``
  stays; also inside nested dicts) are dropped; a file logged with ``log_artifact`` is uploaded as a
  redacted copy when its text holds a secret.
- **Faults.** Every call a `Tracker` or `RoundLog` makes to the store goes through
  `memopt.tracking.store.GuardedStore`: a failure is one `TrackingError` naming the store (password
  masked, `shown_uri`), the step and the cause (disk full, read-only, gone, unreachable); a
  ``sqlite:`` database moved or deleted mid-run is noticed before the next call (never silently
  recreated empty), and once the store is gone or unreachable later calls fail at once, so cleanup
  after an error or a Ctrl-C is quick. MLflow's HTTP retries are bounded (`HTTP_DEFAULTS`) so a dead
  tracking server costs seconds, not minutes, and SIGINT / SIGTERM stay honoured.
- MLflow is imported inside methods only, and its INFO logs and progress bars are silenced.
"""

from memopt.tracking.null import NullTracker
from memopt.tracking.prompts import check_prompt_secret, prompt_name
from memopt.tracking.runs import RoundLog, Tracker
from memopt.tracking.store import (
    DEFAULT_TRACKING_URI,
    URI_ORDER,
    check_run_id,
    download_artifacts,
    resolve_tracking_uri,
    run_info,
    shown_uri,
    store_lock,
)

__all__ = ["DEFAULT_TRACKING_URI", "URI_ORDER", "Tracker", "NullTracker", "RoundLog", "resolve_tracking_uri",
           "prompt_name", "run_info", "download_artifacts", "check_run_id", "check_prompt_secret", "store_lock",
           "shown_uri"]
