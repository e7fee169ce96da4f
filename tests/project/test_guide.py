"""Issue 17: docs/guide.md works as written.

The guide's ``sh`` blocks are read from the Markdown, each with the checks written in the
``<!-- guide: … -->`` comment above it, so guide and test cannot drift: ``expect="RE"`` (a
fact of the output, stdout and stderr together), ``exit=N`` (default 0), ``quiet`` (no output
at all), ``until="RE" within=S`` (run again every 2 s until the output matches, for at most S
seconds). Each block runs with bash, in order, in one folder, against the realistic site of
``xyleme.sitegen`` served on 127.0.0.1, its address put in place of the guide's
``https://docs.example.org``. Every block must pass.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import shlex
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.paths import ROOT
from xyleme.lock import holder_pid
from xyleme.sitegen import RealSiteServer, SiteSpec

GUIDE = ROOT / "docs" / "guide.md"
SITE = "https://docs.example.org"
STEP = re.compile(r"<!-- guide:(?P<checks>.*?)-->\n```sh\n(?P<script>.*?)```", re.DOTALL)
COMMAND_TIMEOUT = 120.0
"""Seconds any one block may run (a hung command fails the test, never hangs it)."""
POLL_SECONDS = 2.0


@dataclass(frozen=True)
class Step:
    """One ``sh`` block of the guide and what its comment says to check."""

    script: str
    expect: str | None = None
    exit: int = 0
    quiet: bool = False
    until: str | None = None
    within: float = 0.0


def guide_steps(text: str) -> list[Step]:
    steps = []
    for match in STEP.finditer(text):
        checks: dict[str, object] = {}
        for word in shlex.split(match["checks"]):
            name, _, value = word.partition("=")
            checks[name] = value if value or name != "quiet" else True
        steps.append(
            Step(
                script=match["script"],
                expect=checks.get("expect"),
                exit=int(checks.get("exit", 0)),
                quiet=bool(checks.get("quiet", False)),
                until=checks.get("until"),
                within=float(checks.get("within", 0)),
            )
        )
    return steps


def test_every_sh_block_of_the_guide_is_checked():
    text = GUIDE.read_text(encoding="utf-8")
    steps = guide_steps(text)
    assert len(steps) == text.count("```sh\n") > 20
    for step in steps:
        assert step.expect or step.quiet or step.until, step.script
        assert not step.until or step.within > 0, step.script


def test_the_readme_links_the_guide():
    assert "(docs/guide.md)" in (ROOT / "README.md").read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def site() -> Iterator[str]:
    """The realistic site on 127.0.0.1, served by a loop in a thread of its own (the guide's
    commands run in other processes)."""
    loop = asyncio.new_event_loop()
    served = RealSiteServer(SiteSpec(seed=17, size=150))
    thread = threading.Thread(target=loop.run_forever, name="guide-site", daemon=True)
    thread.start()
    asyncio.run_coroutine_threadsafe(served.start(), loop).result(timeout=60)
    try:
        yield served.site.seeds[0].rstrip("/")
    finally:
        asyncio.run_coroutine_threadsafe(served.stop(), loop).result(timeout=30)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout=10)
        loop.close()


def environment() -> dict[str, str]:
    """This interpreter's ``xyleme`` and ``warcio`` first on PATH, and this checkout's
    packages (PYTHONPATH), as the tests' other child processes get them."""
    env = dict(os.environ)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    env["COLUMNS"] = "200"
    env.pop("XYLEME_REPO", None)
    return env


def run(script: str, folder: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["bash", "-e", "-o", "pipefail", "-c", script],
        cwd=folder,
        env=environment(),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=COMMAND_TIMEOUT,
        start_new_session=True,  # the daemon it starts is not in pytest's process group
    )


def check(step: Step, done: subprocess.CompletedProcess, address: str) -> str | None:
    """What is wrong with the result of ``step`` (None when it is as the guide says)."""
    output = done.stdout + done.stderr
    if done.returncode != step.exit:
        return f"exit code {done.returncode}, not {step.exit}"
    if step.quiet and output.strip():
        return "printed something"
    for pattern in filter(None, [step.expect, step.until]):
        pattern = pattern.replace(re.escape(SITE), re.escape(address)).replace(
            re.escape(SITE.split("//")[1]), re.escape(address.split("//")[1])
        )
        if not re.search(pattern, output, re.MULTILINE):
            return f"no {pattern!r} in the output"
    return None


def stop_daemon(folder: Path) -> None:
    """Stop a daemon the guide started and left running (after a failed step): the pid the
    repository's lock names, if it is an `xyleme run`."""
    with contextlib.suppress(FileNotFoundError, ValueError, ProcessLookupError):
        pid = holder_pid(folder / "docs-crawl")
        if pid and "run" in Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace"):
            os.kill(pid, signal.SIGTERM)
            for _ in range(100):
                if not Path(f"/proc/{pid}").exists():
                    break
                time.sleep(0.1)
            else:
                os.kill(pid, signal.SIGKILL)


@pytest.mark.slow
def test_the_guide_works_on_a_real_site(site, tmp_path):
    steps = guide_steps(GUIDE.read_text(encoding="utf-8"))
    try:
        for step in steps:
            script = step.script.replace(SITE, site)
            attempts = max(1, int(step.within / POLL_SECONDS)) if step.until else 1
            for _ in range(attempts):
                done = run(script, tmp_path)
                wrong = check(step, done, site)
                if wrong is None:
                    break
                if step.until:
                    time.sleep(POLL_SECONDS)
            else:
                pytest.fail(
                    f"guide step {step.script!r}: {wrong}"
                    + (f" (within {step.within:g} s)" if step.until else "")
                    + f"\n--- stdout\n{done.stdout}\n--- stderr\n{done.stderr}"
                )
    finally:
        stop_daemon(tmp_path)
