"""matplotlib for the benchmarks' plots, imported only when a plot is drawn.

matplotlib comes with the optional ``[bench]`` extra: a ``--smoke`` run draws nothing and so
runs with ``[test]`` alone, and a full run without it stops with one line saying what to install
instead of a traceback.
"""

from __future__ import annotations

from types import ModuleType


def pyplot() -> ModuleType:
    """``matplotlib.pyplot`` on the file-only Agg backend, or a clear exit if it is missing."""
    try:
        import matplotlib
    except ImportError:
        raise SystemExit(
            "the plots need matplotlib: pip install -e '.[bench]' (--smoke draws no plot)"
        ) from None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt
