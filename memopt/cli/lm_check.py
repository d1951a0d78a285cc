"""`memopt lm-check`: ask an LM one question through DSPy and report the reply and its latency.

Any failure to reach or use the LM ends in one `LMError` (exit code 2) naming the spec and what to
do; no API key is ever printed. Retries are off, so an unreachable server fails at once.
"""

from __future__ import annotations

import time

import typer

__all__ = ["lm_check", "QUESTION", "CONTEXT"]

QUESTION = "Where does Alice live?"
CONTEXT = "[1 May 2023] Alice: I live in Paris now."


def lm_check(
    lm: str = typer.Option("sim", "--lm", help="LM spec: 'sim', 'sim:SEED', 'local', 'openai/gpt-4.1-mini', "
                                               "'MODEL@http://127.0.0.1:8008/v1', ..."),
    timeout: float = typer.Option(30.0, "--timeout", min=0.1, help="Seconds to wait for the answer."),
) -> None:
    """Ask an LM one question through DSPy; print the model, whether it is simulated, the reply, the latency."""
    import dspy

    from memopt.lm.adapter import preferred_adapter
    from memopt.lm.build import make_lm
    from memopt.lm.explain import explain_lm_error
    from memopt.lm.signatures import AnswerQuestion
    from memopt.lm.spec import describe_lm, parse_lm_spec

    spec = parse_lm_spec(lm)
    model = make_lm(spec, num_retries=0, timeout=None if spec.simulated else timeout)
    start = time.perf_counter()
    try:
        with dspy.context(lm=model, adapter=preferred_adapter(model) or dspy.ChatAdapter()):
            reply = dspy.Predict(AnswerQuestion)(question=QUESTION, context=CONTEXT).answer
    except Exception as e:
        raise explain_lm_error(spec, e) from None
    latency_ms = (time.perf_counter() - start) * 1000
    info = describe_lm(spec)
    api_base = info["api_base"] or model.kwargs.get("api_base")
    typer.echo(f"model:     {info['model']}" + (f" @ {api_base}" if api_base else ""))
    typer.echo(f"simulated: {'yes' if info['simulated'] else 'no'}")
    typer.echo(f"question:  {QUESTION}")
    typer.echo(f"reply:     {reply}")
    typer.echo(f"latency:   {latency_ms:.0f} ms")
