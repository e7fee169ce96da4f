"""The small simulated web of the simweb tests, and two helpers to read it over HTTP."""

import numpy as np

from xyleme.simweb import (
    Fault,
    GroundTruth,
    SimWebSettings,
)

SMALL = SimWebSettings(hosts=8, pages=600, seed=21)


async def get(session, url, **options):
    """Status, headers and body of one request (redirects not followed unless asked)."""
    options.setdefault("allow_redirects", False)
    async with session.get(url, **options) as response:
        return response.status, response.headers, await response.read()


def pages_where(server, condition, at=None):
    """Fault-free pages alive at ``at`` (default: now) meeting ``condition``, by id."""
    web = server.web
    at = server.clock.now() if at is None else at
    alive = GroundTruth(web).alive(at)
    ok = alive & (web.structure.fault == Fault.NONE) & condition
    return np.flatnonzero(ok).tolist()
