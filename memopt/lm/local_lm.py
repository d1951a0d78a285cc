"""`LocalLM`: the ``dspy.LM`` of the ``local`` spec, whose failed calls say how memopt's llama.cpp server died.

Contract: a call that raises while the server process this memopt started for the model has ended
raises `memopt.core.errors.LMError` instead, naming the spec and how the server died
(`memopt.lm.local.server_death`: a crash of llama-cpp-python's build on this CPU with the rebuild
command, another signal, or an exit code). Any other failure passes through unchanged. It is
imported only when a ``local`` LM is built (it imports DSPy).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import dspy

from memopt.core.errors import LMError
from memopt.lm.failures import failure_kind

__all__ = ["LocalLM"]


class LocalLM(dspy.LM):
    """A ``dspy.LM`` on memopt's own llama.cpp server of local model ``local_model``."""

    def __init__(self, model: str, *, local_model: str, server_death: Callable[..., str | None], **kwargs: Any) -> None:
        super().__init__(model, **kwargs)
        self.local_model = local_model
        self.server_death = server_death  # `memopt.lm.local.server_death`, passed in so this module imports none

    def _death(self, exc: Exception) -> LMError | None:
        # A dropped connection waits a moment for the process to end; other failures only look.
        death = self.server_death(self.local_model, wait=2.0 if failure_kind(exc) == "unreachable" else 0.0)
        if death is None:
            return None
        return LMError(f"LM 'local:{self.local_model}': {death} ({type(exc).__name__} on the call in flight).")

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """``dspy.LM.__call__``; a failure while the server is dead says how it died."""
        try:
            return super().__call__(*args, **kwargs)
        except Exception as e:
            death = self._death(e)
            if death is None:
                raise
            raise death from None

    async def acall(self, *args: Any, **kwargs: Any) -> Any:
        """``dspy.LM.acall``; a failure while the server is dead says how it died."""
        try:
            return await super().acall(*args, **kwargs)
        except Exception as e:
            death = self._death(e)
            if death is None:
                raise
            raise death from None
