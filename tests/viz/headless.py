"""Opening a report in headless Debian chromium: the viewer's self-test (``#fxlab-selftest``
makes the page expand a module and a repeat box, search and reveal a node, and write what
it saw and how long it took into ``<pre id="fxlab-selftest">``), and a screenshot."""
from __future__ import annotations

import html
import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome")
_FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--hide-scrollbars")


def chromium() -> str | None:
    return next((path for name in CHROMIUM_NAMES if (path := shutil.which(name))), None)


def selftest(report: Path, timeout: float = 120.0) -> dict[str, Any]:
    """Run the viewer's self-test in ``report``; its findings plus chromium's console errors."""
    binary = chromium()
    assert binary is not None, "chromium is not installed"
    url = report.resolve().as_uri() + "#fxlab-selftest"
    done = subprocess.run([binary, *_FLAGS, "--enable-logging=stderr", "--v=0", "--virtual-time-budget=20000", "--dump-dom", url], capture_output=True, text=True, timeout=timeout, check=False)
    start = done.stdout.find('<pre id="fxlab-selftest">')
    if start < 0:
        raise AssertionError(f"the viewer wrote no self-test result (exit {done.returncode}): {done.stderr[-2000:]}")
    start += len('<pre id="fxlab-selftest">')
    result = json.loads(html.unescape(done.stdout[start : done.stdout.index("</pre>", start)]))
    result["console_errors"] = [line for line in done.stderr.splitlines() if "CONSOLE" in line and ("ERROR" in line or "Uncaught" in line)]
    return result


def screenshot(report: Path, png: Path, timeout: float = 120.0, size: str = "1400,900", stage: str = "") -> Path:
    """A picture of the report's viewer (showing ``stage`` of the first graph if given)."""
    binary = chromium()
    assert binary is not None, "chromium is not installed"
    png.parent.mkdir(parents=True, exist_ok=True)
    url = report.resolve().as_uri() + "#fxlab-shot" + (f":{stage}" if stage else "")
    subprocess.run([binary, *_FLAGS, f"--window-size={size}", "--virtual-time-budget=60000", "--run-all-compositor-stages-before-draw", f"--screenshot={png.resolve()}", url], capture_output=True, timeout=timeout, check=True)
    return png
