"""The persistent on-disk cache of LM replies (DSPy's cache), shared by every real LM of a process.

Contract:

- **What is cached.** Replies of real LMs (LiteLLM specs, ``@URL`` servers, ``local``) built with
  ``make_lm(..., cache=True)``, which the CLI and experiments do unless ``--no-cache`` (or
  ``lm.cache: false``). memopt never sets a sampling temperature above 0 (it leaves the provider's
  default, or 0 for ``local``), so the same request gets the same answer and a cached reply stands
  in for it. SimLM (in-process) is never cached: it costs nothing. Failed calls are not cached; a
  reply that arrived but could not be parsed is, and a parse retry asks again past it (see
  `memopt.lm.build.make_lm`).
- **Key.** DSPy's: the model, the messages and the call's settings; never the API key or the server
  URL (``api_base``), so a reply cached from one endpoint serves the same model at another.
- **Where.** ``$MEMOPT_CACHE_DIR`` if set, else ``.memopt/cache`` in the working directory (git-ignored).
  `configure_cache` points DSPy's process-wide cache there (both its memory and disk tiers); the
  first LM built with caching does it, unless a directory was configured explicitly before
  (``configure_cache(path)``), which then stays.
- **Damage.** A cache folder that cannot be used never stops a run. One whose database is corrupt or
  truncated is moved aside (``cache.damaged-<time>``, kept for inspection) and started anew; one that
  cannot be written (read-only, not a directory, no permission) is bypassed: replies are cached in
  memory only for this process. A shard that fails later, mid-run, is bypassed from then on. Each is
  one ``warning:`` line naming the folder and what to do. The databases are not memory-mapped
  (``sqlite_mmap_size`` 0, kept in each shard's settings), so a file truncated while a process has
  it open is an SQLite error for that process, never a crash (SIGBUS).
- **One thread at the disk.** Every read and write of the disk tier runs on one thread of its own
  (``memopt-cache``), whatever thread made the LM call: the tier keeps one SQLite connection per shard,
  with its page cache warm. A connection per worker thread (diskcache's default) means dozens of
  connections per shard, each opened with a dozen queries; one thread instead lowered the client's CPU
  per request by 1.2 ms on average at concurrency 16 (5 paired runs; docs/real-lms.md).
- **Secrets.** A reply's text is masked (`memopt.core.redaction.redact`) before it is stored on disk: a reply
  echoing a credential never lands in the cache's database.
- **Counting.** A reply served from the cache is a call (it counts against ``budget.max_lm_calls``,
  so a repeated run takes the same path) but is not billed: it has no tokens and no cost, and
  `memopt.lm.usage.UsageMeter` counts it as ``cached``.
"""

from __future__ import annotations

import logging
import os
import sqlite3
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

__all__ = ["CACHE_ENV", "DEFAULT_CACHE_DIR", "cache_dir", "configure_cache"]

CACHE_ENV = "MEMOPT_CACHE_DIR"
DEFAULT_CACHE_DIR = Path(".memopt") / "cache"
_LIMIT_BYTES = 10 * 1024**3
_lock = threading.Lock()
_configured: Path | None = None
_SHARDS, _TIMEOUT = 16, 10  # DSPy's FanoutCache layout
_log = logging.getLogger(__name__)
_PROBE = "memopt-cache-probe"


def cache_dir(path: str | Path | None = None) -> Path:
    """The cache directory: ``path``, else ``$MEMOPT_CACHE_DIR``, else ``.memopt/cache`` (absolute)."""
    chosen = path or os.environ.get(CACHE_ENV) or DEFAULT_CACHE_DIR
    return Path(chosen).expanduser().resolve()


def configure_cache(path: str | Path | None = None) -> Path:
    """Point DSPy's cache at ``path`` (without one: keep the directory configured, else use `cache_dir`); a damaged
    folder is set aside and rebuilt, an unwritable one bypassed (memory only), each with one warning."""
    global _configured
    with _lock:
        if path is None and _configured is not None:
            return _configured
        directory = cache_dir(path)
        if _configured != directory:
            import dspy

            disk = _usable(directory)
            dspy.configure_cache(enable_disk_cache=disk, enable_memory_cache=True,
                                 disk_cache_dir=str(directory) if disk else None, disk_size_limit_bytes=_LIMIT_BYTES)
            if disk:
                dspy.cache.disk_cache = _Guarded(dspy.cache.disk_cache, directory)
            _configured = directory
    return directory


def _damaged(error: BaseException) -> bool:
    """Whether a SQLite error says the file's content is broken (rather than that it cannot be written)."""
    text = str(error).lower()
    return isinstance(error, sqlite3.DatabaseError) and (
        not isinstance(error, sqlite3.OperationalError) or "malformed" in text or "not a database" in text)


def _probe(directory: Path) -> None:
    """Open the cache as DSPy will and write, read and delete a key in every shard (errors propagate)."""
    from diskcache import FanoutCache

    # sqlite_mmap_size=0 is stored in each shard's settings, so DSPy's connections read it too: a database file that
    # is truncated while the process has it open is then an SQLite error (a bypassed cache), never a SIGBUS.
    cache = FanoutCache(str(directory), shards=_SHARDS, timeout=_TIMEOUT, size_limit=_LIMIT_BYTES, sqlite_mmap_size=0)
    try:
        for shard in cache._shards:
            shard.set(_PROBE, b"ok")
            if shard.get(_PROBE) != b"ok":
                raise sqlite3.DatabaseError("a probe written to the cache read back differently")
            shard.delete(_PROBE)
            shard._sql("PRAGMA quick_check").fetchall()
    finally:
        cache.close()


def _usable(directory: Path) -> bool:
    """Whether the on-disk tier can be used at ``directory``, after setting a damaged one aside (see the docstring)."""
    fix = f"set ${CACHE_ENV} to a writable folder, or pass --no-cache"
    try:
        directory.mkdir(parents=True, exist_ok=True)
        try:
            _probe(directory)
        except sqlite3.DatabaseError as e:
            if not _damaged(e):
                raise
            aside = directory.with_name(f"{directory.name}.damaged-{time.strftime('%Y%m%dT%H%M%S')}")
            directory.rename(aside)
            _log.warning("warning: LM reply cache %s was damaged (%s); moved it to %s and started an empty one.",
                         directory, e, aside)
            directory.mkdir()
            _probe(directory)
        return True
    except (OSError, sqlite3.Error) as e:
        reason = e.strerror if isinstance(e, OSError) and e.strerror else str(e)
        _log.warning("warning: LM reply cache %s cannot be used (%s); replies are cached in memory only for this "
                     "run (%s).", directory, reason, fix)
        return False


def masked_reply(value: Any) -> Any:
    """A copy of an LM reply (LiteLLM's response: its choices' messages and texts) with its text masked by
    `redact`, so a reply echoing a credential never reaches the disk; ``value`` itself when nothing is masked."""
    import copy

    from memopt.core.redaction import redact, secret_values

    def texts(reply: Any) -> list[tuple[Any, str]]:
        found = []
        for choice in getattr(reply, "choices", None) or []:
            for holder in (choice, getattr(choice, "message", None)):
                for name in ("text", "content", "reasoning_content"):
                    if isinstance(getattr(holder, name, None), str):
                        found.append((holder, name))
        return found

    secrets = secret_values()  # read once: each read scans the environment, and every stored reply passes here
    if not any(redact(getattr(h, n), secrets) != getattr(h, n) for h, n in texts(value)):
        return value
    value = copy.deepcopy(value)
    for holder, name in texts(value):
        setattr(holder, name, redact(getattr(holder, name), secrets))
    return value


class _Guarded:
    """DSPy's disk tier, used from one thread of its own, bypassed (a miss, nothing stored) from its first failure
    on, with one warning."""

    def __init__(self, disk: Any, directory: Path) -> None:
        self._disk, self._directory, self._failed = disk, directory, False
        self._io: ThreadPoolExecutor | None = None
        self._pid = 0
        self._io_lock = threading.Lock()

    def _on_io(self, operation: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """``operation(*args, **kwargs)`` run on the tier's own thread (started on first use, again after a fork)."""
        with self._io_lock:
            if self._io is None or self._pid != os.getpid():
                self._io = ThreadPoolExecutor(max_workers=1, thread_name_prefix="memopt-cache")
                self._pid = os.getpid()
            io = self._io
        return io.submit(operation, *args, **kwargs).result()

    def _fail(self, error: Exception) -> None:
        if not self._failed:
            self._failed = True
            _log.warning("warning: LM reply cache %s failed (%s: %s); it is bypassed for the rest of this run (set "
                         "$%s to another folder, or delete this one).", self._directory, type(error).__name__, error,
                         CACHE_ENV)

    def get(self, key: str, *args: Any, **kwargs: Any) -> Any:
        """The cached value of ``key`` (None once the cache has failed)."""
        from dspy.clients.disk_serialization import DeserializationError

        if self._failed:
            return None
        try:
            return self._on_io(self._disk.get, key, *args, **kwargs)
        except DeserializationError:
            raise  # DSPy drops that one entry itself
        except Exception as e:  # sqlite3.Error, OSError, diskcache.Timeout: a miss, never a failed LM call
            self._fail(e)
            return None

    def set(self, key: str, value: Any, *args: Any, **kwargs: Any) -> bool:
        """Store ``value`` under ``key`` (nothing once the cache has failed)."""
        if self._failed:
            return False
        try:
            return self._on_io(self._disk.set, key, masked_reply(value), *args, **kwargs)
        except Exception as e:
            self._fail(e)
            return False

    def delete(self, key: str, *args: Any, **kwargs: Any) -> bool:
        """Delete ``key`` (nothing once the cache has failed)."""
        if self._failed:
            return False
        try:
            return self._on_io(self._disk.delete, key, *args, **kwargs)
        except Exception as e:
            self._fail(e)
            return False

    def __contains__(self, key: str) -> bool:
        """Whether ``key`` is cached (False once the cache has failed)."""
        if self._failed:
            return False
        try:
            return bool(self._on_io(self._disk.__contains__, key))
        except Exception as e:
            self._fail(e)
            return False

    def __getattr__(self, name: str) -> Any:
        return getattr(self._disk, name)
