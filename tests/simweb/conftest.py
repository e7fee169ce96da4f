"""The simweb tests' shared fixture."""

import pytest

from metadata import ManualClock
from tests.simweb_fixtures import SMALL
from xyleme.simweb import DAY, SimWebServer


@pytest.fixture
async def served():
    """A small web with every fault on, at one day after its epoch, and a client for it."""
    clock = ManualClock(SMALL.epoch + DAY)
    async with SimWebServer(SMALL, clock) as server, server.client_session() as session:
        yield server, session, clock
