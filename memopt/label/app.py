"""The labelling page's web app (Starlette), and serving it (uvicorn) on the loopback interface by default.

Routes — there is no static-file route, so no request names a path on disk; cases are numbers:

| route | what |
|---|---|
| ``GET /`` | the page (`memopt.label.page`) |
| ``GET /api/cases`` | every case (decision, blamed op and type), the progress, what is damaged |
| ``GET /api/case/{i}`` | one case: question, expected answer, prediction, date, attribution, label, ops |
| ``GET /view/{i}`` | the case's graph view, `memopt show --case`'s viewer with its evidence path and blamed op |
| ``POST /api/label/{i}`` | a decision (JSON: ``decision``, ``error_type``, ``op_id``, ``flags``, ``note``), saved |

Only the hosts the server was started for are answered (`TrustedHostMiddleware`: another site's page cannot
reach the server through a DNS name pointed at 127.0.0.1), a decision needs the page's token (header
``X-Memopt-Token``), and every response forbids the browser any other origin (a Content-Security-Policy of
``'self'``) and framing by other sites.
"""

from __future__ import annotations

import secrets
from functools import lru_cache
from typing import Any

from memopt.core.errors import MemoptError
from memopt.label.page import page_html
from memopt.label.review import ReviewSet, describe

__all__ = ["TOKEN_HEADER", "label_app", "free_port", "serve"]

TOKEN_HEADER = "X-Memopt-Token"
_HEADERS = {"Content-Security-Policy": "default-src 'self'; script-src 'self' 'unsafe-inline'; style-src 'self' "
                                      "'unsafe-inline'; img-src 'self' data:; frame-ancestors 'self'",
            "X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer", "Cache-Control": "no-store"}


def label_app(review: ReviewSet, *, hosts: list[str], token: str | None = None) -> Any:
    """The Starlette app of a review (see the module docstring); ``hosts``: the Host names it answers."""
    from starlette.applications import Starlette
    from starlette.middleware import Middleware
    from starlette.middleware.trustedhost import TrustedHostMiddleware
    from starlette.requests import Request
    from starlette.responses import HTMLResponse, JSONResponse, Response
    from starlette.routing import Route

    token = token or secrets.token_urlsafe(24)

    def secured(response: Response) -> Response:
        response.headers.update(_HEADERS)
        return response

    def failure(status: int, message: str) -> Response:
        return secured(JSONResponse({"error": message}, status_code=status))

    def index(_: Request) -> Response:
        return secured(HTMLResponse(page_html(str(review.directory.name), token)))

    def cases(_: Request) -> Response:
        review.recheck()
        rows = [{"index": i, "case_id": item.case_id, "error": item.error,
                 "error_type": item.attributed.get("error_type"), "operation": item.attributed.get("operation"),
                 "decision": (label.decision if (label := review.labels.labels.get(item.case_id)) else None)}
                for i, item in enumerate(review.items)]
        return secured(JSONResponse({"cases": rows, "progress": review.progress(), "errors": review.errors(),
                                     "readonly": review.label_error is not None,
                                     "labels_file": review.labels.path.name}))

    def case(request: Request) -> Response:
        try:
            return secured(JSONResponse(describe(review, request.path_params["index"])))
        except MemoptError as e:
            return failure(404, str(e))

    @lru_cache(maxsize=64)
    def view_of(index: int) -> str:
        from memopt.trace.render import render_html

        item = review.item(index)
        G = review.graph(item)
        if G is None or item.case is None:
            raise MemoptError(f"case {item.case_id} has no readable graph: {item.error or 'it is gone'}")
        a = item.case.attribution
        blamed = a.op_id if a.op_id in G and G.nodes[a.op_id].get("type") == "op" else None
        return render_html(G, case=item.case.key, highlight=[n for n in a.evidence_path if n in G], blamed=blamed,
                           title=f"{a.case_id}: {a.error_type} at {a.operation}")

    def view(request: Request) -> Response:
        try:
            return secured(HTMLResponse(view_of(request.path_params["index"])))
        except MemoptError as e:
            return secured(HTMLResponse(f"<!doctype html><meta charset=utf-8><p>{_escape(str(e))}</p>",
                                        status_code=404))

    async def decide(request: Request) -> Response:
        if not secrets.compare_digest(request.headers.get(TOKEN_HEADER, ""), token):
            return failure(403, "this page's token is missing: reload the page.")
        try:
            body = await request.json()
        except ValueError:
            return failure(400, "the request is not JSON.")
        if not isinstance(body, dict):
            return failure(400, "the request is not a JSON object.")
        try:
            flags = body.get("flags") or []
            label = review.decide(request.path_params["index"], body.get("decision"),
                                  error_type=body.get("error_type"), op_id=body.get("op_id"),
                                  flags=[str(f) for f in flags] if isinstance(flags, list) else [str(flags)],
                                  note=str(body.get("note") or ""))
        except MemoptError as e:
            return failure(400, str(e))
        return secured(JSONResponse({"label": label.to_annotation() if label else None,
                                     "progress": review.progress()}))

    routes = [Route("/", index), Route("/api/cases", cases), Route("/api/case/{index:int}", case),
              Route("/view/{index:int}", view), Route("/api/label/{index:int}", decide, methods=["POST"])]
    return Starlette(routes=routes, middleware=[Middleware(TrustedHostMiddleware, allowed_hosts=hosts)])


def _escape(text: str) -> str:
    from html import escape

    return escape(text)


def free_port(host: str, port: int) -> int:
    """``port`` if it can be listened on at ``host`` (0: a free one); else a `ConfigError` saying so."""
    import socket

    from memopt.core.errors import ConfigError

    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        try:
            probe.bind((host, port))
        except OSError as e:
            raise ConfigError(f"--host {host} --port {port}: cannot listen there ({e.strerror or e}); pass another "
                              "--port (0 picks a free one).") from None
        return probe.getsockname()[1]


def serve(review: ReviewSet, *, host: str = "127.0.0.1", port: int = 8765) -> None:
    """Serve the page on ``host``:``port`` until interrupted (uvicorn, one process, no access log)."""
    import uvicorn

    local = host in ("127.0.0.1", "localhost")
    hosts = ["127.0.0.1", "localhost"] if local else [host]
    config = uvicorn.Config(label_app(review, hosts=hosts), host=host, port=port, log_level="warning",
                            access_log=False, lifespan="off")
    uvicorn.Server(config).run()
