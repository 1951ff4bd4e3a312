"""A minimal Chrome DevTools Protocol client over ``--remote-debugging-pipe`` (stdlib only).

Chromium reads commands from fd 3 and writes replies and events to fd 4, each message one JSON
object terminated by a NUL byte. One page target is attached in flat mode; events are kept so a
test can read console errors and requests afterwards.
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


def chromium() -> str | None:
    """Path of a Chromium/Chrome binary, or None."""
    for name in ("chromium", "chromium-browser", "google-chrome", "chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


class Browser:
    """Headless Chromium with one page; ``call`` sends a command and waits for its reply."""

    def __init__(self, binary: str, width: int = 1200, height: int = 900) -> None:
        self.profile = tempfile.mkdtemp(prefix="ddp-cdp-")
        cmd_read, self._cmd = os.pipe()
        self._out, out_write = os.pipe()

        def child_fds() -> None:  # via fresh descriptors, so neither dup2 clobbers the other's source
            a, b = os.dup(cmd_read), os.dup(out_write)
            os.dup2(a, 3)
            os.dup2(b, 4)

        self.proc = subprocess.Popen(
            [binary, "--headless", "--no-sandbox", "--disable-gpu", "--remote-debugging-pipe", "--no-first-run",
             "--disable-background-networking", "--disable-component-update", "--disable-sync",
             f"--user-data-dir={self.profile}", f"--window-size={width},{height}", "about:blank"],
            close_fds=False, preexec_fn=child_fds,  # keeps the dup2'ed 3 and 4; our own ends are not inheritable
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(cmd_read)
        os.close(out_write)
        self._buffer = b""
        self._next_id = 0
        self.events: list[dict[str, Any]] = []
        self.session: str | None = None
        target = self.call("Target.createTarget", url="about:blank")["targetId"]
        self.session = self.call("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
        for domain in ("Page", "Runtime", "Log", "Network"):
            self.call(f"{domain}.enable")
        self.call("Emulation.setDeviceMetricsOverride", width=width, height=height, deviceScaleFactor=1, mobile=False)

    def _read(self, deadline: float) -> dict[str, Any]:
        while b"\0" not in self._buffer:
            if time.monotonic() > deadline:
                raise TimeoutError("no reply from Chromium")
            chunk = os.read(self._out, 1 << 16)
            if not chunk:
                raise ConnectionError("Chromium closed the pipe")
            self._buffer += chunk
        message, self._buffer = self._buffer.split(b"\0", 1)
        return json.loads(message)

    def call(self, method: str, timeout: float = 30.0, **params: Any) -> dict[str, Any]:
        """Send ``method`` (to the page session once attached) and return its result; raise on error."""
        self._next_id += 1
        message: dict[str, Any] = {"id": self._next_id, "method": method, "params": params}
        if self.session and not method.startswith("Target."):
            message["sessionId"] = self.session
        os.write(self._cmd, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + timeout
        while True:
            reply = self._read(deadline)
            if reply.get("id") == self._next_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            self.events.append(reply)

    def wait_for(self, event: str, timeout: float = 30.0) -> dict[str, Any]:
        """The first ``event`` already received or arriving within ``timeout``."""
        deadline = time.monotonic() + timeout
        while True:
            for i, seen in enumerate(self.events):
                if seen.get("method") == event:
                    return self.events.pop(i)
            self.events.append(self._read(deadline))

    def open(self, url: str) -> None:
        """Navigate and wait for the load event."""
        self.events.clear()
        self.call("Page.navigate", url=url)
        self.wait_for("Page.loadEventFired")

    def evaluate(self, expression: str) -> Any:
        """Value of a JavaScript expression in the page (returned by value)."""
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True)
        if "exceptionDetails" in result:
            raise RuntimeError(result["exceptionDetails"].get("text", "exception"))
        return result["result"].get("value")

    def screenshot(self, path: Path) -> Path:
        """Full-page PNG."""
        data = self.call("Page.captureScreenshot", format="png", captureBeyondViewport=True)["data"]
        path.write_bytes(base64.b64decode(data))
        return path

    def console_errors(self) -> list[str]:
        """Console errors, uncaught exceptions and error log entries seen so far."""
        out = []
        for e in self.events:
            method, params = e.get("method"), e.get("params", {})
            if method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
                out.append(" ".join(str(a.get("value", a.get("description", ""))) for a in params.get("args", [])))
            elif method == "Runtime.exceptionThrown":
                out.append(params.get("exceptionDetails", {}).get("text", "exception"))
            elif method == "Log.entryAdded" and params.get("entry", {}).get("level") == "error":
                out.append(params["entry"].get("text", ""))
        return out

    def requests(self) -> list[str]:
        """URLs the page requested since it was opened."""
        return [e["params"]["request"]["url"] for e in self.events if e.get("method") == "Network.requestWillBeSent"]

    def close(self) -> None:
        """Close the browser and remove its profile."""
        try:
            self.call("Browser.close", timeout=5)
        except (RuntimeError, TimeoutError, ConnectionError, OSError):
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        os.close(self._cmd)
        os.close(self._out)
        shutil.rmtree(self.profile, ignore_errors=True)
