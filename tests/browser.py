"""Headless Chromium for tests, driven over the DevTools protocol on a pipe (no extra package), as
`tests/scripts/mlflow_traces_screenshot.py` drives it; this one also records every network request a page makes.

    with Chromium() as browser:
        browser.open(page.as_uri())
        assert browser.requests(outside="file://") == []

Debian's ``/usr/bin/chromium`` (`CHROMIUM`); `available` says whether it is there. Every wait polls a condition
with a deadline; nothing sleeps a fixed time.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

CHROMIUM = "/usr/bin/chromium"
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--remote-debugging-pipe")


def available() -> bool:
    """Whether Chromium is installed where the tests look for it."""
    return Path(CHROMIUM).is_file()


class Chromium:
    """One headless Chromium with one page (see the module docstring)."""

    def __init__(self, width: int = 1400, height: int = 900) -> None:
        self._profile = tempfile.mkdtemp(prefix="memopt-chromium-")
        to_child, self._writer = os.pipe()
        self._reader, from_child = os.pipe()

        def wire() -> None:
            os.dup2(to_child, 3)
            os.dup2(from_child, 4)

        self._proc = subprocess.Popen([CHROMIUM, *FLAGS, f"--user-data-dir={self._profile}",
                                       f"--window-size={width},{height}", "about:blank"],
                                      pass_fds=(3, 4, to_child, from_child), preexec_fn=wire,
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(to_child)
        os.close(from_child)
        self._buffer = b""
        self._id = 0
        self.events: list[dict[str, Any]] = []
        target = self._send("Target.createTarget", url="about:blank")["targetId"]
        self._session = self._send("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
        self._send("Emulation.setDeviceMetricsOverride", width=width, height=height, deviceScaleFactor=1,
                   mobile=False, session=True)
        self._send("Network.enable", session=True)
        self._send("Page.enable", session=True)

    def __enter__(self) -> Chromium:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _read(self) -> dict[str, Any]:
        while b"\0" not in self._buffer:
            chunk = os.read(self._reader, 1 << 16)
            if not chunk:
                raise RuntimeError("chromium closed the DevTools pipe")
            self._buffer += chunk
        raw, self._buffer = self._buffer.split(b"\0", 1)
        return json.loads(raw)

    def _send(self, method: str, session: bool = False, **params: Any) -> dict[str, Any]:
        self._id += 1
        message: dict[str, Any] = {"id": self._id, "method": method, "params": params}
        if session:
            message["sessionId"] = self._session
        os.write(self._writer, json.dumps(message).encode() + b"\0")
        while True:
            reply = self._read()
            if reply.get("id") == self._id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            if "method" in reply:
                self.events.append(reply)

    def run(self, script: str) -> Any:
        """Evaluate JavaScript in the page (promises awaited); its value."""
        reply = self._send("Runtime.evaluate", expression=script, returnByValue=True, awaitPromise=True,
                           session=True)
        if "exceptionDetails" in reply:
            raise RuntimeError(f"script failed: {reply['exceptionDetails'].get('text')}: {script[:200]}")
        return reply["result"].get("value")

    def open(self, url: str, expect: str | None = None, timeout: float = 60) -> None:
        """Load ``url`` and wait until the document is complete (and its text holds ``expect``)."""
        self._send("Page.navigate", url=url, session=True)
        self.wait(lambda: self.run("document.readyState") == "complete" and
                  self.run("location.href") != "about:blank", timeout, f"{url} to load")
        if expect is not None:
            self.wait_for(expect, timeout)

    def wait(self, condition: Any, timeout: float = 30, what: str = "a condition") -> None:
        """Poll ``condition()`` until it is true, or fail after ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        while not condition():
            if time.monotonic() > deadline:
                raise TimeoutError(f"waited {timeout:.0f} s for {what}")
            time.sleep(0.05)

    def wait_for(self, text: str, timeout: float = 30) -> None:
        """Wait until the page's visible text holds ``text``."""
        self.wait(lambda: text in (self.text() or ""), timeout, f"the page to show {text!r}")

    def text(self) -> str:
        """The page's visible text."""
        return str(self.run("document.body ? document.body.innerText : ''"))

    def key(self, key: str) -> None:
        """Press and release one key, as a person would (``a``, ``ArrowRight``, ``Enter``, ``1``)."""
        named = {"Enter": ("\r", 13), "Escape": ("", 27), "ArrowRight": ("", 39), "ArrowLeft": ("", 37),
                 "ArrowDown": ("", 40), "ArrowUp": ("", 38), "Tab": ("", 9)}
        text, code = named.get(key, (key, ord(key.upper()) if len(key) == 1 else 0))
        for kind in ("keyDown", "keyUp"):
            params: dict[str, Any] = {"type": kind, "key": key, "windowsVirtualKeyCode": code}
            if kind == "keyDown" and text:
                params["text"] = text
            self._send("Input.dispatchKeyEvent", session=True, **params)

    def type(self, text: str) -> None:
        """Type text into the focused element."""
        self._send("Input.insertText", text=text, session=True)

    def requests(self) -> list[str]:
        """Every URL the page has requested so far (DevTools ``Network.requestWillBeSent``)."""
        self._send("Runtime.evaluate", expression="1", session=True)  # flush the events that came before
        return [e["params"]["request"]["url"] for e in self.events if e.get("method") == "Network.requestWillBeSent"]

    def screenshot(self, path: Path, *, full: bool = False, width: int | None = None) -> Path:
        """Save the viewport (or the whole page, ``full``) as PNG."""
        params: dict[str, Any] = {"format": "png"}
        if full:
            size = self.run("[document.documentElement.scrollWidth, document.documentElement.scrollHeight]")
            params |= {"captureBeyondViewport": True,
                       "clip": {"x": 0, "y": 0, "width": width or size[0], "height": size[1], "scale": 1}}
        data = self._send("Page.captureScreenshot", session=True, **params)["data"]
        path.write_bytes(base64.b64decode(data))
        return path

    def close(self) -> None:
        """Stop Chromium and remove its profile."""
        self._proc.terminate()
        try:
            self._proc.wait(10)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait(10)
        os.close(self._writer)
        os.close(self._reader)
        shutil.rmtree(self._profile, ignore_errors=True)
