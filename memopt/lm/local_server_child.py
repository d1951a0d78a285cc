"""The child process behind the ``local`` LM spec: llama.cpp's OpenAI-compatible server, tied to its parent.

Run by `memopt.lm.local` as ``python -m memopt.lm.local_server_child --parent-pid PID [--pdeathsig] --
SERVER_ARGS...``
with a pipe as stdin. Contract: this process never outlives the memopt process that started it.

- A watchdog thread reads stdin; at EOF (the parent closed the pipe, or died for any reason,
  SIGKILL included, and the kernel closed it) the process exits at once (``os._exit``).
- With ``--pdeathsig`` (given when the parent started it from its main thread), on Linux it also
  asks the kernel for SIGTERM when the parent dies (``PR_SET_PDEATHSIG``), before anything else.
  Either way it then exits if its parent is no longer ``--parent-pid`` (a parent that died before
  this process got going).
- Then it runs ``llama_cpp.server`` in this same process with SERVER_ARGS, so the pid the parent
  holds is the server's pid.

It imports nothing from memopt, so it starts fast and carries no DSPy.
"""

from __future__ import annotations

import argparse
import ctypes
import os
import runpy
import signal
import sys
import threading

__all__ = ["main", "PR_SET_PDEATHSIG"]

PR_SET_PDEATHSIG = 1


def _die_with_parent() -> None:
    """Ask Linux for SIGTERM when the parent dies."""
    if not sys.platform.startswith("linux"):
        return
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)


def _exit_on_stdin_eof() -> None:
    """Block on stdin (the raw descriptor: no buffer lock to hold at shutdown) until EOF, then end the process."""
    try:
        while os.read(0, 4096):
            pass
    finally:
        os._exit(0)


def main(argv: list[str]) -> None:
    """Tie this process to its parent, then run llama.cpp's server with the arguments after ``--``."""
    parser = argparse.ArgumentParser(prog="python -m memopt.lm.local_server_child")
    parser.add_argument("--parent-pid", type=int, required=True, help="pid of the memopt process")
    parser.add_argument("--pdeathsig", action="store_true", help="also end on SIGTERM when the parent dies (Linux)")
    parser.add_argument("server_args", nargs=argparse.REMAINDER, help="-- then the llama_cpp.server arguments")
    args = parser.parse_args(argv)
    if args.pdeathsig:
        _die_with_parent()
    if os.getppid() != args.parent_pid:
        os._exit(0)
    threading.Thread(target=_exit_on_stdin_eof, name="parent-watchdog", daemon=True).start()
    sys.argv = ["llama_cpp.server", *(args.server_args[1:] if args.server_args[:1] == ["--"] else args.server_args)]
    runpy.run_module("llama_cpp.server", run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main(sys.argv[1:])
