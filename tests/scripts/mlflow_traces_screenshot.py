"""Screenshots of an optimize run in the MLflow UI (headless Chromium), for docs/mlflow.md.

    python tests/scripts/mlflow_traces_screenshot.py [--store DIR] [--out DIR] [--rounds N]

Without ``--store`` it runs a quickstart of ``--rounds`` rounds (default 1: ``memopt optimize
experiments/quickstart.yaml --rounds 1``) in a temporary directory; with it, it uses the ``mlflow.db``
and ``mlruns/`` an optimize run left in DIR. It starts ``mlflow server`` on a free port of 127.0.0.1 (one worker, no
job runner), drives Debian's ``/usr/bin/chromium`` headless over the DevTools protocol on a pipe
(no extra packages), and writes seven PNGs into ``--out`` (default ``./mlflow-screenshots``):

- ``round-traces.png``: experiment → run ``round-1`` → **Traces** tab: one row per traced case with
  the assessment columns ``traced_case.f1``, ``traced_case.judge`` and ``memtrace.attribution`` and their summaries;
- ``trace.png``: one UpdateError (else DeletionError, else any failed) trace opened from that table,
  its blamed op span selected, the **Assess** pane open (the ``memtrace.attribution`` feedback
  expanded: reason and metadata);
- ``runs.png``: the experiment's runs list opened on memopt's shared view (``?viewStateShareKey=memopt-result``):
  each run's ``result/test_f1.baseline``, ``.best``, ``.gain`` columns without a click;
- ``run-overview.png``: the parent run's Overview, its Markdown description as it opens (no "Show more"): the
  result on its first line;
- ``run-chart.png``: the parent run's **Model metrics**, the ``result`` section first (baseline, best and gain
  of val / test F1 and judge accuracy), then ``rounds`` (the same per round as lines);
- ``prompt.png``: the prompt ``<scope>.<pipeline>.extract`` (or the first prompt) on the experiment's
  **Prompts** page, its versions with the ``@best`` alias and the commit message;
- ``reflection.png``: a reflection trace of round 1: the messages the reflection LM was sent (system, user) and
  its reply, one span per candidate.

The server is stopped (its whole process group) when the script ends. PNGs are not committed.
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = "/usr/bin/chromium"
ATTRIBUTION = "memtrace.attribution"


class Browser:
    """Headless Chromium driven over ``--remote-debugging-pipe`` (CDP messages, NUL-separated JSON)."""

    def __init__(self, width: int = 2000, height: int = 1100) -> None:
        self._profile = tempfile.mkdtemp(prefix="memopt-chromium-")
        to_child, self._writer = os.pipe()
        self._reader, from_child = os.pipe()

        def wire() -> None:
            os.dup2(to_child, 3)
            os.dup2(from_child, 4)

        self._proc = subprocess.Popen(
            [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
             "--disable-component-update", "--disable-sync", "--no-first-run", f"--user-data-dir={self._profile}",
             "--remote-debugging-pipe", f"--window-size={width},{height}", "about:blank"],
            pass_fds=(3, 4, to_child, from_child), preexec_fn=wire, stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL)
        os.close(to_child)
        os.close(from_child)
        self._buffer = b""
        self._id = 0
        target = self._send("Target.createTarget", url="about:blank")["targetId"]
        self._session = self._send("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
        self._send("Emulation.setDeviceMetricsOverride", width=width, height=height, deviceScaleFactor=1,
                   mobile=False, session=True)

    def _send(self, method: str, session: bool = False, **params: Any) -> dict[str, Any]:
        self._id += 1
        message = {"id": self._id, "method": method, "params": params}
        if session:
            message["sessionId"] = self._session
        os.write(self._writer, json.dumps(message).encode() + b"\0")
        while True:
            while b"\0" not in self._buffer:
                chunk = os.read(self._reader, 1 << 16)
                if not chunk:
                    raise RuntimeError("chromium closed the DevTools pipe")
                self._buffer += chunk
            raw, self._buffer = self._buffer.split(b"\0", 1)
            reply = json.loads(raw)
            if reply.get("id") == self._id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})

    def run(self, script: str) -> Any:
        """Evaluate JavaScript in the page; its value."""
        reply = self._send("Runtime.evaluate", expression=script, returnByValue=True, session=True)
        return reply["result"].get("value")

    def open(self, url: str, expect: str, timeout: float = 120) -> None:
        """Load ``url`` afresh and wait until the page's text holds ``expect``."""
        self._send("Page.navigate", url="about:blank", session=True)
        self._send("Page.navigate", url=url, session=True)
        self.wait_for(expect, timeout)

    def wait_for(self, text: str, timeout: float = 60) -> None:
        """Wait until the page's text holds ``text``."""
        deadline = time.monotonic() + timeout
        while not self.run(f"document.body && document.body.innerText.includes({json.dumps(text)})"):
            if time.monotonic() > deadline:
                raise TimeoutError(f"the page never showed {text!r}")
            time.sleep(0.5)

    def click(self, css: str | None = None, *, text: str | None = None, within: str = "body") -> bool:
        """Click the first element matching ``css``, or the innermost one under ``within`` whose text is ``text``."""
        if css is not None:
            script = f"document.querySelector({json.dumps(css)})"
        else:
            script = f"""Array.from(document.querySelectorAll({json.dumps(within + ' *')}))
                .filter(e => e.innerText && e.innerText.trim() === {json.dumps(text)})
                .sort((a, b) => a.getElementsByTagName('*').length - b.getElementsByTagName('*').length)[0]"""
        return bool(self.run(f"(() => {{ const e = {script}; if (!e) return false; "
                             "e.scrollIntoView({block: 'center'}); e.click(); return true; })()"))

    def text(self) -> str:
        """The page's visible text."""
        return str(self.run("document.body.innerText"))

    def screenshot(self, path: Path) -> Path:
        """Save the viewport as PNG."""
        data = self._send("Page.captureScreenshot", format="png", session=True)["data"]
        path.write_bytes(base64.b64decode(data))
        return path

    def close(self) -> None:
        """Stop Chromium and remove its profile."""
        self._proc.terminate()
        try:
            self._proc.wait(10)
        except subprocess.TimeoutExpired:
            self._proc.kill()
        shutil.rmtree(self._profile, ignore_errors=True)


def one_round_store(directory: Path, rounds: int = 1) -> Path:
    """Run a quickstart of ``rounds`` rounds in ``directory`` (its ``mlflow.db`` and ``mlruns/``); the directory.

    Every failure is attributed (``attribution.sample`` above the failures), so the round's traces carry every error
    type the round has, not the stratified sample's."""
    import yaml

    spec = yaml.safe_load((ROOT / "experiments" / "quickstart.yaml").read_text())
    spec["attribution"]["sample"] = 100_000
    experiment = directory / "quickstart-all-failures.yaml"
    experiment.write_text(yaml.safe_dump(spec, sort_keys=False))
    done = subprocess.run([sys.executable, "-m", "memopt", "optimize", str(experiment),
                           "--rounds", str(rounds), "--tracking-uri", f"sqlite:///{directory / 'mlflow.db'}", "--out",
                           "summary.json"], cwd=directory, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"memopt optimize failed:\n{done.stderr[-3000:]}")
    return directory


def round_and_trace(store: Path) -> dict[str, str]:
    """The experiment, round-1 run and the trace to open (UpdateError, else DeletionError, else any failed)."""
    import mlflow

    uri = f"sqlite:///{store / 'mlflow.db'}"
    client = mlflow.MlflowClient(uri)
    [run, *_] = client.search_runs([e.experiment_id for e in client.search_experiments()],
                                   filter_string="tags.`memopt.round` = '1'", order_by=["attributes.start_time DESC"])
    experiment = run.info.experiment_id
    traces = client.search_traces(locations=[experiment], run_id=run.info.run_id, include_spans=False,
                                  filter_string="tags.`memopt.kind` = 'case'")
    order = {"UpdateError": 0, "DeletionError": 1}
    blamed = sorted(((order.get(a.value, 2), t.info.trace_id, a) for t in traces for a in t.info.assessments
                     if a.name == ATTRIBUTION), key=lambda x: x[:2])
    if not blamed:
        raise RuntimeError(f"run {run.info.run_id} has no traces with a {ATTRIBUTION} assessment")
    _, trace_id, assessment = blamed[0]
    op_id = assessment.metadata["op_id"]
    parent = run.data.tags["mlflow.parentRunId"]
    prompts = sorted(p.name for p in client.search_prompts(filter_string=f"experiment_id = '{experiment}'"))
    prompt = next((p for p in prompts if p.endswith(".extract")), prompts[0] if prompts else "")
    reflections = client.search_traces(locations=[experiment], run_id=run.info.run_id, include_spans=False,
                                       filter_string="tags.`memopt.kind` = 'reflection'")
    return {"experiment": experiment, "run": run.info.run_id, "trace": trace_id, "error_type": assessment.value,
            "span": f"{assessment.metadata['operation']}:{op_id.rsplit(':', 1)[-1]}", "parent": parent,
            "prompt_name": prompt, "reflection": reflections[0].info.trace_id if reflections else ""}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def mlflow_server(store: Path, timeout: float = 180) -> Iterator[str]:
    """``mlflow server`` on the store, on a free loopback port; yields its base URL; stops its process group."""
    port = _free_port()
    env = {**os.environ, "MLFLOW_SERVER_ENABLE_JOB_EXECUTION": "false", "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    proc = subprocess.Popen([sys.executable, "-m", "mlflow", "server", "--backend-store-uri",
                             f"sqlite:///{store / 'mlflow.db'}", "--host", "127.0.0.1", "--port", str(port),
                             "--workers", "1"], cwd=store, env=env, start_new_session=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + timeout
        while True:
            try:
                urllib.request.urlopen(f"{url}/health", timeout=2)
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"mlflow server did not come up on {url}") from None
                time.sleep(1)
        yield url
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)


def capture(store: Path, out: Path) -> dict[str, Any]:
    """Both screenshots of a store's round 1; returns their paths, the ids used and each page's text."""
    found = round_and_trace(store)
    out.mkdir(parents=True, exist_ok=True)
    with mlflow_server(store) as url:
        browser = Browser()
        try:
            browser.open(f"{url}/#/experiments/{found['experiment']}/runs/{found['run']}/traces", ATTRIBUTION)
            browser.click('[aria-label="Close guidance"]')
            browser.click('[aria-label="Close"]')  # the MLflow Assistant side panel
            time.sleep(1)
            table = browser.text()
            browser.screenshot(out / "round-traces.png")
            browser.open(f"{url}/#/experiments/{found['experiment']}/traces?selectedEvaluationId={found['trace']}",
                         found["span"])
            browser.click('[aria-label="Close guidance"]')
            if not (browser.click(text=found["span"], within="[role=dialog]")
                    and browser.click('[aria-label^="Assess trace"]')):
                raise RuntimeError(f"trace {found['trace']}: no span {found['span']!r} or no Assess button to click")
            browser.wait_for(found["error_type"])
            browser.click('[role=dialog] [data-component-id$="toggle-assessment-expanded"]')  # reason and metadata
            time.sleep(1)
            detail = browser.text()
            browser.screenshot(out / "trace.png")
            story = _story(browser, url, found, out)
        finally:
            browser.close()
    return {**found, "table": table, "detail": detail, **story,
            "pngs": [out / "round-traces.png", out / "trace.png", out / "runs.png", out / "run-overview.png",
                     out / "run-chart.png", out / "prompt.png", out / "reflection.png"]}


def _story(browser: Browser, url: str, found: dict[str, str], out: Path) -> dict[str, str]:
    """The experiment's runs with their results, the parent run's description and charts, and a prompt's page; each
    page's text (the overview's also as its description's first line, as the page opens)."""
    from memopt.tracking.views import runs_page

    run = f"{url}/#/experiments/{found['experiment']}/runs/{found['parent']}"
    texts = {}
    reflection = f"{url}/#/experiments/{found['experiment']}/traces?selectedEvaluationId={found['reflection']}"
    for name, page, expect in (("runs", runs_page(found["experiment"], f"{url}/"), "result/test_f1.best"),
                               ("overview", run, "Description"), ("chart", f"{run}/model-metrics", "rounds"),
                               ("prompt", f"{url}/#/prompts/{found['prompt_name']}", "Commit message"),
                               ("reflection_page", reflection, "reflect ")):
        browser.open(page, expect)
        browser.click('[aria-label="Close guidance"]')
        browser.click('[aria-label="Close"]')
        time.sleep(6 if name == "chart" else 2)  # charts draw after their data arrives
        texts[name] = browser.text()
        if name == "overview":  # the description as it opens, before any "Show more"
            texts["first_line"] = next((line for line in texts[name].split("Description", 1)[-1].splitlines()
                                        if line.strip()), "")
        browser.screenshot(out / {"runs": "runs.png", "overview": "run-overview.png", "chart": "run-chart.png",
                                  "prompt": "prompt.png", "reflection_page": "reflection.png"}[name])
    return texts


def main() -> None:
    """Command line: see the module docstring."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--store", type=Path, help="directory of an optimize run's mlflow.db (default: run one)")
    parser.add_argument("--out", type=Path, default=Path("mlflow-screenshots"), help="where the PNGs go")
    parser.add_argument("--rounds", type=int, default=1, help="rounds of the quickstart run without --store")
    args = parser.parse_args()
    if not Path(CHROMIUM).exists():
        sys.exit(f"{CHROMIUM} not found: install Debian's chromium package.")
    with tempfile.TemporaryDirectory(prefix="memopt-quickstart-") as tmp:
        store = args.store.resolve() if args.store else one_round_store(Path(tmp), args.rounds)
        shot = capture(store, args.out)
    for png in shot["pngs"]:
        print(f"wrote {png}")
    print(f"trace {shot['trace']} ({shot['error_type']}, blamed span {shot['span']}) of run {shot['run']}")


if __name__ == "__main__":
    main()
