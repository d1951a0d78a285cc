"""How many LM calls may be in flight at once, per LM role, and the gate that enforces it.

- **Setting.** ``lm.concurrency`` in an experiment (``--concurrency`` on the command line) is one
  number for every role, or a mapping per role (``{task: 16, judge: 8, reflection: 2}``; roles left
  out take their default). The default is `DEFAULT_CONCURRENCY` (8) for an API or a server, and 1
  for ``sim`` (SimLM runs in-process, so threads buy nothing under the GIL) and for ``local`` (the
  llama.cpp server answers one request at a time).
- **Gate.** `LMSlots` is a DSPy callback attached to every LM of one role: a call takes a slot
  when it starts and gives it back when it ends (failed or not), so however many threads work
  (conversations, questions, trials, attributions at once), no more than ``limit`` calls of that
  role are in flight. ``peak`` records the most seen at once. Like `memopt.lm.usage.UsageMeter` it
  implements DSPy's callback protocol by duck typing (every other hook is a no-op).
- **One request per prompt in flight.** For an LM with the reply cache on, a call whose request (model,
  settings, messages) equals one already in flight waits for that one to end, then goes on and is served
  from the cache. Two identical prompts sent at once (the same judge question, the same fact extraction
  by two trials) cost one request, not two, and how many replies come from the cache no longer depends
  on thread timing: a run makes the same requests at any concurrency.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping, Sequence
from typing import Any

from memopt.core.errors import ConfigError
from memopt.lm.spec import LMSpec, spec_list

__all__ = ["DEFAULT_CONCURRENCY", "MAX_CONCURRENCY", "LMSlots", "default_concurrency", "role_concurrency",
           "threads_for"]

DEFAULT_CONCURRENCY = 8
MAX_CONCURRENCY = 256
_ROLES = ("task", "judge", "reflection")


def default_concurrency(spec: LMSpec | Sequence[LMSpec]) -> int:
    """The default concurrency of a parsed LM spec (or list of them): 1 for ``sim`` and ``local``, else 8."""
    specs = spec_list(spec)
    if any(s.provider or s.local for s in specs):
        return 1
    return DEFAULT_CONCURRENCY


def _check(where: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_CONCURRENCY:
        raise ConfigError(f"{where}: concurrency must be an integer from 1 to {MAX_CONCURRENCY}, got {value!r}.")
    return value


def role_concurrency(setting: int | Mapping[str, int] | None,
                     specs: Mapping[str, LMSpec | Sequence[LMSpec]]) -> dict[str, int]:
    """Concurrency per role from a setting (one number, a per-role mapping, or None) and the roles' parsed specs."""
    if isinstance(setting, Mapping):
        unknown = sorted(set(setting) - set(_ROLES))
        if unknown:
            raise ConfigError(f"lm.concurrency: unknown role(s) {', '.join(unknown)}; roles: {', '.join(_ROLES)}.")
        return {role: _check(f"lm.concurrency.{role}", setting[role]) if role in setting
                else default_concurrency(specs[role]) for role in specs}
    if setting is not None:
        value = _check("lm.concurrency", setting)
        return dict.fromkeys(specs, value)
    return {role: default_concurrency(spec) for role, spec in specs.items()}


def threads_for(*limits: int) -> int:
    """Threads that keep the slots of roles used one after another (answer, then judge) busy: their sum; 1 when
    no role runs calls concurrently (SimLM: in-process, the same results in the same order)."""
    return sum(limits) if max(limits) > 1 else 1


def _ignore(*args: Any, **kwargs: Any) -> None:
    return None


class LMSlots:
    """DSPy callback: at most ``limit`` LM calls in flight at once across every LM it is attached to."""

    def __init__(self, limit: int, name: str = "lm") -> None:
        self.limit = _check(name, limit)
        self.name = name
        self._slots = threading.BoundedSemaphore(limit)
        self._lock = threading.Lock()
        self._held: set[str] = set()
        self._flying: dict[str, threading.Event] = {}
        self._request_of: dict[str, str] = {}
        self.peak = 0

    def __getattr__(self, name: str) -> Any:
        if name.startswith("on_"):
            return _ignore
        raise AttributeError(name)

    def on_lm_start(self, call_id: str, instance: Any, inputs: dict[str, Any]) -> None:
        """DSPy callback: wait for an identical cached request in flight to end, then for a free slot; hold it."""
        if getattr(instance, "cache", False):
            self._fly_alone(call_id, _request_key(instance, inputs))
        self._slots.acquire()
        with self._lock:
            self._held.add(call_id)
            self.peak = max(self.peak, len(self._held))

    def _fly_alone(self, call_id: str, key: str) -> None:
        """Wait until no call with request ``key`` is in flight, then mark this one as it."""
        while True:
            with self._lock:
                twin = self._flying.get(key)
                if twin is None:
                    self._flying[key] = threading.Event()
                    self._request_of[call_id] = key
                    return
            twin.wait()

    def on_lm_end(self, call_id: str, outputs: Any, exception: BaseException | None = None) -> None:
        """DSPy callback: give the call's slot back (and let its waiting twins go)."""
        with self._lock:
            key = self._request_of.pop(call_id, None)
            landed = self._flying.pop(key, None) if key is not None else None
        if landed is not None:
            landed.set()
        with self._lock:
            if call_id not in self._held:
                return
            self._held.discard(call_id)
        self._slots.release()


def _request_key(instance: Any, inputs: dict[str, Any]) -> str:
    """What makes two calls the same request for the reply cache: model, settings, prompt and messages."""
    request = (getattr(instance, "model", ""), getattr(instance, "kwargs", {}), inputs.get("prompt"),
               inputs.get("messages"), inputs.get("kwargs"))
    return json.dumps(request, sort_keys=True, default=str)
