"""A rank vector together with how it was made (LAW's ``buildProperties``).

Every vector carries its damping, sweeps, final figure, stop reason and the snapshot id of
the graph it was computed on, so ``xyleme rank show`` can say how a number came to be.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np


@dataclass(frozen=True)
class RankResult:
    """One computed ranking vector and its provenance.

    ``figure`` is the last value of ``figure_name``: ``l1_error_bound`` (a proven bound on
    ‖x − x*‖₁) or ``relative_l1_change`` (progress of the last sweep, no bound).
    """

    kind: str
    values: np.ndarray = field(repr=False)
    damping: float
    sweeps: int
    figure_name: str
    figure: float
    converged: bool
    stopped_by: str
    snapshot: str
    details: dict[str, object] = field(default_factory=dict)

    def provenance(self) -> dict[str, object]:
        """Everything but the vector, as plain JSON-able values."""
        record = asdict(self)
        del record["values"]
        return record

    def save(self, directory: Path) -> Path:
        """Write ``<kind>.npy`` and ``<kind>.json`` into ``directory``; returns the .npy path."""
        directory.mkdir(parents=True, exist_ok=True)
        path = directory / f"{self.kind}.npy"
        np.save(path, np.asarray(self.values))
        (directory / f"{self.kind}.json").write_text(json.dumps(self.provenance(), indent=2))
        return path

    @classmethod
    def load(cls, directory: Path, kind: str, *, mmap: bool = True) -> RankResult:
        """Read back what :meth:`save` wrote (the vector memory-mapped by default)."""
        record = json.loads((directory / f"{kind}.json").read_text())
        values = np.load(directory / f"{kind}.npy", mmap_mode="r" if mmap else None)
        return cls(values=values, **record)
