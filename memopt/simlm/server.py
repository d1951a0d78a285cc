"""SimLM behind a small OpenAI-compatible HTTP server, with deterministic fault injection.

Contract:

- Binds to loopback only (``127.0.0.0/8`` or ``localhost``); any other host is a `ConfigError`.
  No authentication: any API key is accepted. Standard library only (``http.server``).
- ``GET /v1/models`` lists one model (``sim``); ``GET /health`` answers ``{"status": "ok"}``.
- ``POST /v1/chat/completions`` takes the OpenAI chat schema: the system messages, joined, are the
  system text; the last user message is the user text; the reply is `SimLM.respond` on them (so a
  JSONAdapter prompt gets JSON back, whatever ``response_format`` says; the real Mem0's extraction and
  update calls get the bare JSON object Mem0 parses). ``usage`` tokens are characters / 4.
  ``stream: true`` is refused with 400. An unknown path is 404, a bad body 400 (not JSON, nested
  too deeply, a bad ``content-length``), a body over `MAX_BODY` (8 MiB) 413 without reading it,
  always with an OpenAI-style ``{"error": {...}}`` body that says why.
- ``POST /v1/embeddings`` takes the OpenAI embeddings schema (``input``: a string or a list of strings;
  ``dimensions``: 1–8192, default 1536; ``encoding_format``: ``float`` or ``base64``) and returns
  `SimLM.embed`'s *lexical* embeddings: hashed Porter-stem features, unit length, deterministic
  (`memopt.simlm.embedding`). Texts are close when they share words, not when they mean the same.
  At most `MAX_EMBEDDING_INPUTS` (256) texts and `MAX_EMBEDDING_VALUES` (2^20) inputs × dimensions
  per request (413 beyond), so one request cannot take the server's memory.
- Faults apply to chat completions only (never to embeddings) and are deterministic for a seed:
  request *n* draws its fate from the *n*-th pair of numbers of ``random.Random(seed)``. With probability ``fail_rate``
  it fails with ``status`` (429 carries ``retry-after: 0``); otherwise, with probability
  ``malformed_rate``, its content is garbled (cut short, field markers and JSON punctuation
  removed) so no DSPy adapter can parse it. ``delay`` seconds pass before every answer.
- `SimServer.stats` counts chat requests, injected failures, malformed replies and embedding requests.
"""

from __future__ import annotations

import base64
import ipaddress
import json
import logging
import math
import random
import re
import struct
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from memopt.core.errors import ConfigError
from memopt.simlm import SimLM
from memopt.simlm.embedding import DEFAULT_DIMENSIONS, MAX_DIMENSIONS

__all__ = ["SimServer", "ServerStats", "FAULT_STATUSES", "MODEL_ID", "MAX_BODY", "MAX_EMBEDDING_INPUTS",
           "MAX_EMBEDDING_VALUES", "check_loopback", "example_lm_line"]

logger = logging.getLogger(__name__)

FAULT_STATUSES = (429, 500)
MODEL_ID = "sim"
_ERROR_TYPES = {400: "invalid_request_error", 404: "not_found_error", 413: "request_too_large",
                429: "rate_limit_error", 500: "server_error"}
MAX_BODY = 8 * 1024 * 1024
MAX_EMBEDDING_INPUTS = 256
MAX_EMBEDDING_VALUES = 1 << 20  # inputs × dimensions: about 50 MB of reply at most
_MARKER = re.compile(r"\[\[ ## \w+ ## \]\]")


@dataclass(frozen=True)
class ServerStats:
    """Counters of a server: chat-completion requests, injected failures, malformed replies, embedding requests."""

    requests: int = 0
    injected_failures: int = 0
    malformed: int = 0
    embeddings: int = 0


def check_loopback(host: str) -> str:
    """The IPv4 address to bind for ``host``; raises `ConfigError` unless it is a loopback address."""
    if host == "localhost":
        return "127.0.0.1"
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        address = None
    if address is None or address.version != 4 or not address.is_loopback:
        raise ConfigError(f"refusing to serve on host {host!r}: the simulated LM server has no authentication and "
                          "binds to IPv4 loopback only; use --host 127.0.0.1 (or localhost).")
    return host


def example_lm_line(base_url: str) -> str:
    """The ``dspy.LM(...)`` line that reaches a server at ``base_url``."""
    return (f'dspy.LM("openai/{MODEL_ID}", engine="litellm", api_base="{base_url}", api_key="x", '
            "cache=False, num_retries=0)")


def _garble(text: str) -> str:
    cut = _MARKER.sub(" ", text[: max(1, len(text) // 2)])
    return "SimLM (simulated, malformed): " + re.sub(r'[{}\[\]"]', " ", cut).strip()


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return ""


def _prompt(messages: list[dict[str, Any]]) -> tuple[str, str]:
    system = "\n\n".join(_text(m.get("content")) for m in messages if m.get("role") in ("system", "developer"))
    users = [_text(m.get("content")) for m in messages if m.get("role") == "user"]
    return system, users[-1] if users else ""


class _Fate:
    """Which requests fail or come back malformed: a seeded, thread-safe sequence of draws."""

    def __init__(self, seed: int, fail_rate: float, malformed_rate: float) -> None:
        self._rng = random.Random(seed)
        self._lock = threading.Lock()
        self.fail_rate, self.malformed_rate = fail_rate, malformed_rate
        self.requests = self.failures = self.malformed = self.embeddings = 0
        self.arrivals: list[float] = []  # time.monotonic() of each chat-completion request

    def draw(self) -> tuple[bool, bool]:
        """(fail, malformed) for the next request, counted."""
        with self._lock:
            fail_draw, malformed_draw = self._rng.random(), self._rng.random()
            fail = fail_draw < self.fail_rate
            malformed = not fail and malformed_draw < self.malformed_rate
            self.requests += 1
            self.arrivals.append(time.monotonic())
            self.failures += fail
            self.malformed += malformed
            return fail, malformed

    def count_embeddings(self) -> None:
        """Count one embeddings request (embeddings never fail)."""
        with self._lock:
            self.embeddings += 1

    def stats(self) -> ServerStats:
        """A snapshot of the counters."""
        with self._lock:
            return ServerStats(self.requests, self.failures, self.malformed, self.embeddings)


class _Handler(BaseHTTPRequestHandler):
    server: _HTTPServer
    server_version = "memopt-simlm"
    protocol_version = "HTTP/1.1"  # keep-alive, as real APIs do: no new connection per request
    disable_nagle_algorithm = True  # headers and body leave at once (no 40 ms delayed-ACK stall)

    def log_message(self, format: str, *args: Any) -> None:
        logger.debug("%s " + format, self.address_string(), *args)

    def _send(self, status: int, body: dict[str, Any], headers: dict[str, str] | None = None) -> None:
        data = json.dumps(body, ensure_ascii=False).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def _error(self, status: int, message: str, headers: dict[str, str] | None = None) -> None:
        error = {"message": message, "type": _ERROR_TYPES.get(status, "error"), "param": None, "code": None}
        self._send(status, {"error": error}, headers)

    def do_GET(self) -> None:
        if self.path.rstrip("/") == "/v1/models":
            self._send(200, {"object": "list", "data": [{"id": MODEL_ID, "object": "model", "created": 0,
                                                         "owned_by": "memopt (simulated)"}]})
        elif self.path.rstrip("/") == "/health":
            self._send(200, {"status": "ok", "model": MODEL_ID, "simulated": True})
        else:
            self._error(404, f"no route GET {self.path}; try GET /v1/models, POST /v1/chat/completions or "
                             "POST /v1/embeddings")

    def do_POST(self) -> None:
        route = self.path.rstrip("/")
        if route not in ("/v1/chat/completions", "/v1/embeddings"):
            self._error(404, f"no route POST {self.path}; try POST /v1/chat/completions or POST /v1/embeddings")
            return
        body = self._body() if route == "/v1/chat/completions" else self._embeddings_body()
        if body is None:
            return
        if body.get("stream"):
            self._error(400, "stream=true is not supported by the SimLM server; send stream=false")
            return
        try:
            if route == "/v1/embeddings":
                self.server.embed(self, body)
            else:
                self.server.answer(self, body)
        except ConnectionError:
            logger.debug("client %s went away before the answer", self.address_string())
        except Exception as e:
            logger.exception("SimLM failed on a request")
            self._error(500, f"SimLM failed: {type(e).__name__}: {e}")

    def _json(self) -> dict[str, Any] | None:
        declared = self.headers.get("content-length") or "0"
        length = int(declared) if declared.strip().isdigit() and len(declared.strip()) < 16 else -1
        if length < 0:
            self.close_connection = True
            self._error(400, f"content-length {declared[:40]!r} is not a number of bytes")
            return None
        if length > MAX_BODY:
            self.close_connection = True
            self._error(413, f"the request body ({length:,} bytes) is over the limit of {MAX_BODY:,} bytes")
            return None
        try:
            body = json.loads(self.rfile.read(length) or b"null")
        except RecursionError:
            self._error(400, "the request body is JSON nested too deeply")
            return None
        except (ValueError, UnicodeDecodeError) as e:
            self._error(400, f"the request body is not valid JSON ({e})")
            return None
        if not isinstance(body, dict):
            self._error(400, "the request body must be a JSON object")
            return None
        return body

    def _embeddings_body(self) -> dict[str, Any] | None:
        body = self._json()
        if body is None:
            return None
        texts = body.get("input")
        if isinstance(texts, str):
            texts = [texts]
        if not isinstance(texts, list) or not texts or not all(isinstance(t, str) for t in texts):
            self._error(400, "the request body must be a JSON object whose 'input' is a string or a non-empty list "
                             "of strings (token arrays are not supported)")
            return None
        if len(texts) > MAX_EMBEDDING_INPUTS:
            self._error(413, f"'input' holds {len(texts)} texts; at most {MAX_EMBEDDING_INPUTS} per request")
            return None
        dimensions = DEFAULT_DIMENSIONS if body.get("dimensions") is None else body["dimensions"]
        if isinstance(dimensions, bool) or not isinstance(dimensions, int) or not 1 <= dimensions <= MAX_DIMENSIONS:
            self._error(400, f"'dimensions' must be an integer between 1 and {MAX_DIMENSIONS}, got {dimensions!r}")
            return None
        if len(texts) * dimensions > MAX_EMBEDDING_VALUES:
            self._error(413, f"{len(texts)} texts × {dimensions} dimensions is over the limit of "
                             f"{MAX_EMBEDDING_VALUES:,} values per request; send fewer texts per request")
            return None
        if (body.get("encoding_format") or "float") not in ("float", "base64"):
            self._error(400, "'encoding_format' must be 'float' or 'base64'")
            return None
        return {**body, "input": texts, "dimensions": dimensions}

    def _body(self) -> dict[str, Any] | None:
        body = self._json()
        if body is None:
            return None
        messages = body.get("messages")
        if not isinstance(messages, list) or not messages or not all(isinstance(m, dict) for m in messages):
            self._error(400, "the request body must be a JSON object with a non-empty 'messages' list of objects")
            return None
        return body


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, address: tuple[str, int], sim: SimLM, fate: _Fate, status: int, delay: float) -> None:
        super().__init__(address, _Handler)
        self.sim, self.fate, self.status, self.delay = sim, fate, status, delay

    def answer(self, handler: _Handler, body: dict[str, Any]) -> None:
        """Answer one chat completion, failing or garbling it when its fate says so."""
        fail, malformed = self.fate.draw()
        if self.delay:
            time.sleep(self.delay)
        if fail:
            headers = {"retry-after": "0"} if self.status == 429 else None
            handler._error(self.status, f"injected fault (HTTP {self.status}) from the SimLM server", headers)
            return
        system, user = _prompt(body["messages"])
        content = self.sim.respond(system, user)
        if malformed:
            content = _garble(content)
        handler._send(200, _completion(body, system, user, content))

    def embed(self, handler: _Handler, body: dict[str, Any]) -> None:
        """Answer one embeddings request with SimLM's lexical embeddings."""
        self.fate.count_embeddings()
        vectors = self.sim.embed(body["input"], body["dimensions"])
        as_base64 = body.get("encoding_format") == "base64"
        data = [{"object": "embedding", "index": i,
                 "embedding": _base64(vector) if as_base64 else vector} for i, vector in enumerate(vectors)]
        tokens = sum(math.ceil(len(text) / 4) for text in body["input"])
        handler._send(200, {"object": "list", "data": data, "model": str(body.get("model") or MODEL_ID),
                            "usage": {"prompt_tokens": tokens, "total_tokens": tokens}})


def _base64(vector: list[float]) -> str:
    return base64.b64encode(struct.pack(f"<{len(vector)}f", *vector)).decode()


def _completion(body: dict[str, Any], system: str, user: str, content: str) -> dict[str, Any]:
    prompt_tokens = math.ceil((len(system) + len(user)) / 4)
    completion_tokens = math.ceil(len(content) / 4)
    return {
        "id": f"chatcmpl-sim-{time.monotonic_ns()}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": str(body.get("model") or MODEL_ID),
        "system_fingerprint": "memopt-simlm",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                  "total_tokens": prompt_tokens + completion_tokens},
    }


def _rate(name: str, value: float) -> float:
    if not 0.0 <= value <= 1.0:
        raise ConfigError(f"{name} must be a probability between 0 and 1, got {value}")
    return value


class SimServer:
    """SimLM behind an OpenAI-compatible server on a background thread (``with SimServer() as server: server.url``)."""

    def __init__(
        self,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        seed: int = 0,
        fail_rate: float = 0.0,
        status: int = 429,
        delay: float = 0.0,
        malformed_rate: float = 0.0,
    ) -> None:
        if status not in FAULT_STATUSES:
            raise ConfigError(f"status of injected failures must be one of {FAULT_STATUSES}, got {status}")
        if delay < 0:
            raise ConfigError(f"delay must be >= 0 seconds, got {delay}")
        self.host, self.port, self.seed, self.status, self.delay = check_loopback(host), port, seed, status, delay
        self._fate = _Fate(seed, _rate("fail_rate", fail_rate), _rate("malformed_rate", malformed_rate))
        self._httpd: _HTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        """Base URL (``http://127.0.0.1:PORT/v1``) of the running server."""
        if self._httpd is None:
            raise RuntimeError("SimServer is not running; call start() first")
        return f"http://{self.host}:{self._httpd.server_address[1]}/v1"

    @property
    def stats(self) -> ServerStats:
        """Counters so far: chat-completion requests, injected failures, malformed replies."""
        return self._fate.stats()

    @property
    def arrivals(self) -> list[float]:
        """When each chat-completion request arrived (``time.monotonic()``): how long a client waited to retry."""
        with self._fate._lock:
            return list(self._fate.arrivals)

    def start(self) -> str:
        """Bind (port 0 picks a free port), serve on a daemon thread, and return the base URL."""
        if self._httpd is not None:
            return self.url
        try:
            self._httpd = _HTTPServer((self.host, self.port), SimLM(self.seed), self._fate, self.status, self.delay)
        except OSError as e:
            raise ConfigError(f"cannot listen on {self.host}:{self.port} ({e.strerror or e}); pick another port "
                              "with --port (0 picks a free one).") from None
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05},
                                        name=f"memopt-simlm-server-{self.port}", daemon=True)
        self._thread.start()
        return self.url

    def stop(self) -> None:
        """Stop serving and release the port (idempotent)."""
        if self._httpd is None:
            return
        self._httpd.shutdown()
        self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._httpd, self._thread = None, None

    def __enter__(self) -> SimServer:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
