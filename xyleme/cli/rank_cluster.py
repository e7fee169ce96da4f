"""``xyleme rank compute --cluster/--workers``: the ranking on a Dask cluster (paper §5.4).

Builds the engine :func:`xyleme.jobs.ranking.rank_repository` calls instead of ranking in this
process: it connects to the scheduler (or starts a ``LocalCluster``), prints the dashboard
link, and shows a rich progress line with each sweep's figure. Dask is imported here only,
when one of the options is given, so the ``[cluster]`` extra stays optional.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable

import click
import numpy as np
from rich.console import Console
from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

from ranking import RankingSettings, RankResult
from ranking.pagerank import parse_size

Engine = Callable[..., tuple[RankResult, RankResult | None]]


class _SweepLine:
    """The progress line: which vector, which sweep, its figure (bound or chaotic residual)."""

    def __init__(self, progress: Progress) -> None:
        self.progress = progress
        self.task = progress.add_task("starting the slice workers", total=None)

    def sweep_done(self, kind: str, sweep: int, figure_name: str, figure: float) -> None:
        name = "residual" if figure_name == "chaotic_residual" else "ℓ₁ bound"
        self.progress.update(self.task, description=f"{kind}: sweep {sweep}  {name} {figure:.2e}")


def cluster_engine(
    address: str | None, workers: int | None, mode: str, worker_memory: str, console: Console
) -> Engine:
    """The engine that ranks on the cluster at ``address`` or on ``workers`` local processes."""
    if importlib.util.find_spec("distributed") is None:
        raise click.ClickException("ranking on a cluster needs Dask: pip install 'xyleme[cluster]'")
    from ranking.cluster import cluster_rank, dask_client

    budget = parse_size(worker_memory)

    def engine(
        graph, is_xml: np.ndarray | None, settings: RankingSettings
    ) -> tuple[RankResult, RankResult | None]:
        with dask_client(address, workers=workers, memory_per_worker=budget) as client:
            link = client.dashboard_link
            shown = link if importlib.util.find_spec("bokeh") else f"{link} (needs bokeh)"
            console.print(f"Dask dashboard: {shown}")
            columns = (SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn())
            with Progress(*columns, console=console, transient=True) as progress:
                return cluster_rank(
                    client,
                    str(graph.directory),
                    is_xml,
                    damping=settings.damping,
                    variant=settings.variant,
                    tol=settings.tol,
                    max_sweeps=settings.max_sweeps,
                    mode=mode,
                    memory_per_worker=budget,
                    monitor=_SweepLine(progress),
                )

    return engine
