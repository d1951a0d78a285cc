"""`memopt serve`: SimLM behind an OpenAI-compatible HTTP server, in the foreground.

Binds to loopback only (another host is a `ConfigError`, exit code 2). Prints the base URL and a
``dspy.LM(...)`` line that reaches it; Ctrl-C (or SIGTERM) stops it cleanly and prints its counters. Both
signals are handled from before the server starts, so one that arrives during start-up or right after
the banner also ends in "stopped: ..." and exit code 0.
"""

from __future__ import annotations

import signal
import threading

import typer

__all__ = ["serve"]


def serve(
    host: str = typer.Option("127.0.0.1", "--host", help="Loopback address to bind (127.0.0.1 or localhost)."),
    port: int = typer.Option(8008, "--port", min=0, max=65535, help="Port; 0 picks a free one."),
    seed: int = typer.Option(0, "--seed", help="Seed of SimLM and of the injected faults."),
    fail_rate: float = typer.Option(0.0, "--fail-rate", min=0.0, max=1.0,
                                    help="Probability that a chat completion fails with --status."),
    status: int = typer.Option(429, "--status", help="HTTP status of injected failures: 429 or 500."),
    delay: float = typer.Option(0.0, "--delay", min=0.0, max=3600.0, help="Seconds to wait before every answer."),
    malformed_rate: float = typer.Option(0.0, "--malformed-rate", min=0.0, max=1.0,
                                         help="Probability that a reply is garbled (no parsable output fields)."),
) -> None:
    """Serve SimLM at an OpenAI-compatible endpoint (http://127.0.0.1:PORT/v1) until Ctrl-C."""
    from memopt.simlm import SimServer, example_lm_line

    server = SimServer(host=host, port=port, seed=seed, fail_rate=fail_rate, status=status, delay=delay,
                       malformed_rate=malformed_rate)
    stop = threading.Event()
    previous = {s: signal.signal(s, lambda *_: stop.set()) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        url = server.start()
        typer.echo(f"SimLM (simulated) serving at {url}  (Ctrl-C to stop)")
        typer.echo(f"  spec:   --lm openai/sim@{url}")
        typer.echo(f"  python: {example_lm_line(url)}")
        while not stop.wait(0.5):
            pass
    finally:
        server.stop()
        for s, handler in previous.items():
            signal.signal(s, handler)
    stats = server.stats
    typer.echo(f"stopped: {stats.requests} requests, {stats.injected_failures} injected failures, "
               f"{stats.malformed} malformed replies, {stats.embeddings} embedding requests")
