"""How xyleme starts a Python child process: the same ``xyleme``, never the caller's folder.

``python -m xyleme …`` puts the working directory first on ``sys.path``, so a child started
from a folder that holds a ``xyleme/`` directory (the clone's parent folder, say) imports
that folder instead of the parent's code, and fails or runs the wrong one. Every child
(the simulated web, the archive writer, the dashboard's query workers, the demo's) is
started with :func:`python_command` and :func:`child_environment`: Python's safe path
(``-P`` and ``PYTHONSAFEPATH=1``, so no working or script directory is added to the path,
for grandchildren too), and the folder this ``xyleme`` was imported from first on
``PYTHONPATH``, so the child imports what the parent runs, even when a script or a test
put that folder on ``sys.path`` only.
"""

from __future__ import annotations

import os
import site
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
"""The folder holding the ``xyleme`` package this process imported."""


def python_command(module: str, *args: str) -> list[str]:
    """The command line running ``python -m module args`` in a child, on the safe path.

    Examples
    --------
    >>> python_command("xyleme", "simweb", "serve")[1:]
    ['-P', '-m', 'xyleme', 'simweb', 'serve']
    """
    return [sys.executable, "-P", "-m", module, *args]


def child_environment() -> dict[str, str]:
    """This process's environment, with the safe path on and :data:`ROOT` first on the path.

    An installed ``xyleme`` (its folder one of the site folders) is found there anyway: that
    folder is not put ahead of the standard library.
    """
    environment = {**os.environ, "PYTHONSAFEPATH": "1"}
    if str(ROOT) in _site_folders():
        return environment
    path = environment.get("PYTHONPATH")
    environment["PYTHONPATH"] = str(ROOT) if not path else f"{ROOT}{os.pathsep}{path}"
    return environment


def _site_folders() -> set[str]:
    folders = set(site.getsitepackages())
    if site.ENABLE_USER_SITE:
        folders.add(site.getusersitepackages())
    return {str(Path(folder).resolve()) for folder in folders}
