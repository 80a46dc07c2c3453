"""A headless Chromium driven over the DevTools protocol, with the standard library only: the
browser is started with ``--remote-debugging-pipe`` and reads JSON commands on fd 3, writes
replies and events on fd 4, each message ending in a NUL byte.

Enough to load a page, collect what would show in its console (exceptions, console errors,
log entries such as failed loads) and every URL it requested, evaluate JavaScript, and take a
full-page screenshot.
"""

from __future__ import annotations

import base64
import fcntl
import json
import os
import select
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any, Dict, List, Optional

#: Names Debian and others give the browser.
NAMES = ("chromium", "chromium-browser", "google-chrome")


def find() -> Optional[str]:
    """The browser's path, or None."""
    for name in NAMES:
        path = shutil.which(name)
        if path:
            return path
    return None


def _above_4(fd: int) -> int:
    """``fd`` moved to a number above 4."""
    high = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10)
    os.close(fd)
    return high


class Browser:
    """One headless browser with one page (a target attached in flat mode)."""

    def __init__(self, executable: str, width: int = 1280, height: int = 900, timeout: float = 60.0) -> None:
        self.timeout = timeout
        self.events: List[Dict[str, Any]] = []
        self._next_id = 0
        self._buffer = b""
        self._profile = tempfile.mkdtemp(prefix="fabricsim-chromium-")
        to_browser_r, self._to_browser = os.pipe()
        self._from_browser, from_browser_w = os.pipe()
        to_browser_r, from_browser_w = _above_4(to_browser_r), _above_4(from_browser_w)
        args = [
            executable, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
            "--no-first-run", "--no-default-browser-check", "--disable-extensions", "--hide-scrollbars",
            "--mute-audio", f"--user-data-dir={self._profile}", f"--window-size={width},{height}",
            "--remote-debugging-pipe", "about:blank",
        ]
        # The browser's own log goes to a file: a pipe nobody reads could fill and stall it.
        self._log = tempfile.TemporaryFile()

        def onto_3_and_4() -> None:
            # In the child: the pipe ends become fds 3 and 4 (both are above 4 here, so neither
            # dup2 overwrites the other); dup2 makes them inheritable, every other fd of ours
            # is not (PEP 446), so nothing else leaks into the browser.
            os.dup2(to_browser_r, 3)
            os.dup2(from_browser_w, 4)

        self.process = subprocess.Popen(args, preexec_fn=onto_3_and_4, close_fds=False,
                                        stdin=subprocess.DEVNULL, stdout=self._log, stderr=self._log)
        os.close(to_browser_r)
        os.close(from_browser_w)
        target = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        self.session = self.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        for domain in ("Page", "Runtime", "Log", "Network"):
            self.call(f"{domain}.enable", session=True)
        self.call("Emulation.setDeviceMetricsOverride",
                  {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False}, session=True)

    def _read(self, deadline: float) -> Dict[str, Any]:
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self._from_browser], [], [], left)[0]:
                raise TimeoutError("the browser did not answer in time")
            chunk = os.read(self._from_browser, 1 << 20)
            if not chunk:
                self._log.seek(0)
                raise RuntimeError(f"the browser exited: {self._log.read().decode(errors='replace')[-2000:]}")
            self._buffer += chunk
        message, self._buffer = self._buffer.split(b"\0", 1)
        return json.loads(message)

    def call(self, method: str, params: Optional[Dict[str, Any]] = None, session: bool = False) -> Dict[str, Any]:
        """Sends a command and returns its result; events that arrive meanwhile are kept in
        :attr:`events`."""
        self._next_id += 1
        message: Dict[str, Any] = {"id": self._next_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = self.session
        os.write(self._to_browser, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + self.timeout
        while True:
            reply = self._read(deadline)
            if reply.get("id") == self._next_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            self.events.append(reply)

    def wait_for(self, method: str) -> Dict[str, Any]:
        """Waits for the event ``method`` (or returns one already received)."""
        deadline = time.monotonic() + self.timeout
        while True:
            for event in self.events:
                if event.get("method") == method:
                    return event
            self.events.append(self._read(deadline))

    def open(self, url: str) -> None:
        """Loads ``url`` and waits for its load event."""
        self.call("Page.navigate", {"url": url}, session=True)
        self.wait_for("Page.loadEventFired")

    def evaluate(self, expression: str) -> Any:
        """The value of a JavaScript expression (awaited if it is a promise)."""
        result = self.call("Runtime.evaluate", {"expression": expression, "returnByValue": True, "awaitPromise": True}, session=True)
        if "exceptionDetails" in result:
            raise RuntimeError(f"JavaScript failed: {result['exceptionDetails']}")
        return result["result"].get("value")

    def errors(self) -> List[str]:
        """Everything that would show as an error in the page's console: uncaught exceptions,
        console.error / console.assert calls, error log entries (failed loads, CSP, ...) and
        failed network requests."""
        found = []
        for e in self.events:
            method, p = e.get("method"), e.get("params", {})
            if method == "Runtime.exceptionThrown":
                found.append(f"exception: {p['exceptionDetails'].get('text')} {p['exceptionDetails'].get('exception', {}).get('description', '')}")
            elif method == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
                found.append(f"console.{p['type']}: {[a.get('value', a.get('description')) for a in p.get('args', [])]}")
            elif method == "Log.entryAdded" and p["entry"].get("level") == "error":
                found.append(f"log: {p['entry'].get('text')} {p['entry'].get('url', '')}")
            elif method == "Network.loadingFailed":
                found.append(f"network: {p.get('errorText')}")
        return found

    def requested_urls(self) -> List[str]:
        """Every URL the page requested."""
        return [e["params"]["request"]["url"] for e in self.events if e.get("method") == "Network.requestWillBeSent"]

    def screenshot(self, path: Path) -> None:
        """A PNG of the whole page, at the window's width."""
        data = self.call("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True}, session=True)["data"]
        path.write_bytes(base64.b64decode(data))

    def close(self) -> None:
        try:
            self.call("Browser.close")
        except (RuntimeError, TimeoutError, OSError):
            pass
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        os.close(self._to_browser)
        os.close(self._from_browser)
        self._log.close()
        shutil.rmtree(self._profile, ignore_errors=True)

    def __enter__(self) -> "Browser":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
