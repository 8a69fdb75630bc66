"""The browser test on a machine without chromium: every test skipped, the reason shown, exit 0.

`make test` runs ``pytest tests/browser``; pytest exits with status 5 when a folder collects
no test at all, which once failed the whole run on machines without a browser. Here the
browser folder runs in a subprocess whose ``PATH`` holds only this interpreter's folder, so
``chromium`` and ``chromedriver`` cannot be found whether or not the machine has them.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_browser_folder_skips_cleanly_without_chromium():
    env = {k: v for k, v in os.environ.items() if k != "PATH"}
    env["PATH"] = str(Path(sys.executable).parent)
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "tests/browser", "-rs", "-q", "-p", "no:xdist"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out
    assert "chromium and chromium-driver are not installed" in out, out
    assert " skipped" in out and " passed" not in out and " failed" not in out, out
