"""One simulated time across processes: a clock fixed by (epoch, speed, real anchor).

Two ``AcceleratedClock`` objects made in two processes a moment apart disagree by that moment
times the speed (at a simulated day per second, 10 ms of start-up is 14 simulated minutes).
So the simulated web announces its clock as numbers: the simulated ``epoch`` it read at the
real Unix time ``anchor``, and its ``speed``. Any process rebuilds the same clock from them
with :func:`shared_clock`; a frozen clock is a :class:`~metadata.clock.ManualClock` at the
epoch, so frozen time is exact in every process.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass

from metadata import AcceleratedClock, Clock, ManualClock


@dataclass(frozen=True)
class ClockSpec:
    """The numbers that fix a simulated clock: it reads ``epoch`` at real time ``anchor``."""

    epoch: float
    speed: float
    anchor: float
    frozen: bool = False

    def to_dict(self) -> dict:
        return asdict(self)


def shared_clock(spec: ClockSpec) -> Clock:
    """The clock ``spec`` describes, built in this process.

    Parameters
    ----------
    spec
        Epoch, speed, real anchor and whether time stands still.

    Returns
    -------
    Clock
        A :class:`~metadata.clock.ManualClock` at ``epoch`` when frozen, else an
        :class:`~metadata.clock.AcceleratedClock` that reads ``epoch`` at real time ``anchor``.

    Examples
    --------
    >>> shared_clock(ClockSpec(epoch=1000.0, speed=10.0, anchor=0.0, frozen=True)).now()
    1000.0
    """
    if spec.frozen:
        return ManualClock(spec.epoch, speed=spec.speed)
    elapsed = time.time() - spec.anchor
    return AcceleratedClock(epoch=spec.epoch + elapsed * spec.speed, speed=spec.speed)
