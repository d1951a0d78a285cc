"""Several endpoints for one LM role, load-balanced through LiteLLM's Router.

A role given a list of specs (``lm.task: [openai/a@http://h1/v1, openai/a@http://h2/v1]`` in an
experiment, ``--lm`` repeated on the command line) gets one ``dspy.LM`` whose engine,
`RouterEngine`, sends each request to one deployment of a LiteLLM ``Router`` (``simple-shuffle``:
a random pick, weighted equally). Every deployment should serve the same model: the LM's model
string (for the cache key, the history and the price) is the first spec's. The Router does not
retry (DSPy does, with backoff, as for one endpoint), and the per-call timeout is the Router's.
API keys come from the environment, as for one endpoint. Creating a Router registers its
deployments in LiteLLM's process-wide cost map (at $0 for a model it cannot price); `RouterEngine`
puts the map back as it was, so an unknown model stays "unknown" and the LM is priced by
`memopt.lm.build.make_lm` from the first spec's model, like one endpoint.
"""

from __future__ import annotations

from typing import Any

from dspy.clients.engines.litellm_engine import LiteLLMEngine
from dspy.clients.engines.litellm_errors import litellm_errors

from memopt.lm.spec import LMSpec, client_params

__all__ = ["RouterEngine", "GROUP"]

GROUP = "memopt-endpoints"


def _deployment(spec: LMSpec, timeout: float | None) -> dict[str, Any]:
    return {"model_name": GROUP, "litellm_params": {"model": spec.model, **client_params(spec, timeout)}}


class RouterEngine(LiteLLMEngine):
    """A DSPy engine that sends each chat request to one of several deployments (LiteLLM ``Router``)."""

    complete_legacy = None  # requests go through `complete`, so through the Router

    def __init__(self, specs: list[LMSpec], *, timeout: float | None = None) -> None:
        import litellm

        super().__init__(model_type="chat")
        self.specs = list(specs)
        prices = dict(litellm.model_cost)
        try:
            self.router = litellm.Router(model_list=[_deployment(s, timeout) for s in specs],
                                         routing_strategy="simple-shuffle", num_retries=0, timeout=timeout)
        finally:
            for key in set(litellm.model_cost) - set(prices):
                del litellm.model_cost[key]
            litellm.model_cost.update(prices)

    def complete(self, request: Any) -> Any:
        """One attempt: the Router picks a deployment and LiteLLM sends the request there."""
        data = self._arguments(request)
        data.update(model=GROUP, num_retries=0)
        data.pop("cache", None)
        with litellm_errors(model=request.model):
            raw = self.router.completion(**data)
        return self._response(raw, request)

    def __repr__(self) -> str:
        return f"RouterEngine({', '.join(s.raw for s in self.specs)})"
