"""What kind of LM failure an exception is (`failure_kind`), read from its chain of causes; a leaf module."""

from __future__ import annotations

from collections.abc import Iterator

__all__ = ["failure_kind"]


def _chain(exc: BaseException) -> Iterator[BaseException]:
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        yield current
        current = current.__cause__ or current.__context__


def failure_kind(exc: BaseException) -> str:
    """What kind of LM failure ``exc`` is: unreachable, timeout, auth, rate_limit, parse, server or other."""
    names = {type(e).__name__ for e in _chain(exc)}
    if any(isinstance(e, ConnectionError) for e in _chain(exc)) or names & {"ConnectError", "APIConnectionError"}:
        return "unreachable"
    if any(isinstance(e, TimeoutError) for e in _chain(exc)) or any("Timeout" in n for n in names):
        return "timeout"
    for kind, marker in (("auth", "AuthError"), ("rate_limit", "RateLimitError"), ("parse", "AdapterParseError"),
                         ("server", "ServerError")):
        if any(marker in n for n in names):
            return kind
    return "other"
