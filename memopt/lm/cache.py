"""The persistent on-disk cache of LM replies (DSPy's cache), shared by every real LM of a process.

Contract:

- **What is cached.** Replies of real LMs (LiteLLM specs, ``@URL`` servers, ``local``) built with
  ``make_lm(..., cache=True)``, which the CLI and experiments do unless ``--no-cache`` (or
  ``lm.cache: false``). memopt never sets a sampling temperature above 0 (it leaves the provider's
  default, or 0 for ``local``), so the same request gets the same answer and a cached reply stands
  in for it. SimLM (in-process) is never cached: it costs nothing. Failed calls are not cached; a
  reply that arrived but could not be parsed is, and a parse retry asks again past it (see
  `memopt.lm.config.make_lm`).
- **Key.** DSPy's: the model, the messages and the call's settings; never the API key or the server
  URL (``api_base``), so a reply cached from one endpoint serves the same model at another.
- **Where.** ``$MEMOPT_CACHE_DIR`` if set, else ``.memopt/cache`` in the working directory (git-ignored).
  `configure_cache` points DSPy's process-wide cache there (both its memory and disk tiers); the
  first LM built with caching does it, unless a directory was configured explicitly before
  (``configure_cache(path)``), which then stays.
- **Counting.** A reply served from the cache is a call (it counts against ``budget.max_lm_calls``,
  so a repeated run takes the same path) but is not billed: it has no tokens and no cost, and
  `memopt.lm.config.UsageMeter` counts it as ``cached``.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

__all__ = ["CACHE_ENV", "DEFAULT_CACHE_DIR", "cache_dir", "configure_cache"]

CACHE_ENV = "MEMOPT_CACHE_DIR"
DEFAULT_CACHE_DIR = Path(".memopt") / "cache"
_LIMIT_BYTES = 10 * 1024**3
_lock = threading.Lock()
_configured: Path | None = None


def cache_dir(path: str | Path | None = None) -> Path:
    """The cache directory: ``path``, else ``$MEMOPT_CACHE_DIR``, else ``.memopt/cache`` (absolute)."""
    chosen = path or os.environ.get(CACHE_ENV) or DEFAULT_CACHE_DIR
    return Path(chosen).expanduser().resolve()


def configure_cache(path: str | Path | None = None) -> Path:
    """Point DSPy's cache at ``path`` (without one: keep the directory configured, else use `cache_dir`)."""
    global _configured
    with _lock:
        if path is None and _configured is not None:
            return _configured
        directory = cache_dir(path)
        if _configured != directory:
            import dspy

            directory.mkdir(parents=True, exist_ok=True)
            dspy.configure_cache(enable_disk_cache=True, enable_memory_cache=True, disk_cache_dir=str(directory),
                                 disk_size_limit_bytes=_LIMIT_BYTES)
            _configured = directory
    return directory
