"""The simulated web: a deterministic local web whose truth is known (issue 3).

Nothing in xyleme may reach the internet, yet the crawler, the loader, the refresh policy and
the demo need something web-like to work on. This package generates one from a seed
(:class:`SimWeb`), serves it on 127.0.0.1 (:class:`SimWebServer`) to clients that resolve
``*.simweb.test`` with :class:`SimWebResolver` or use the server as their HTTP proxy, and
tells tests and benchmarks the truth about it (:class:`GroundTruth`). See ``docs/simweb.md``.

Only the CLI, the demo, the tests and the benchmarks import it; the daemon never does.
"""

from xyleme.simweb.aging import AgedWeb, AgingModel, age_graph, aging_lifecycle, simweb_graph
from xyleme.simweb.lifecycle import LifecycleModel, Lifecycles, independent_lifecycles
from xyleme.simweb.process import SimWebProcess, SimWebProcessError
from xyleme.simweb.render import Renderer
from xyleme.simweb.resolver import SimWebResolver
from xyleme.simweb.server import SimWebServer, UntypedResponse, serve_until_stopped
from xyleme.simweb.settings import DAY, FaultSettings, SettingsError, SimWebSettings
from xyleme.simweb.structure import (
    DOMAIN,
    DTD_PATH,
    ENTITY_PATH,
    SCHEMA_PATH,
    Fault,
    Kind,
    LastModified,
    PageState,
    Robots,
)
from xyleme.simweb.timebase import ClockSpec, shared_clock
from xyleme.simweb.truth import GroundTruth, UnknownURL
from xyleme.simweb.web import SimWeb

__all__ = [
    "DAY",
    "DOMAIN",
    "DTD_PATH",
    "ENTITY_PATH",
    "SCHEMA_PATH",
    "AgedWeb",
    "AgingModel",
    "ClockSpec",
    "Fault",
    "FaultSettings",
    "GroundTruth",
    "Kind",
    "LastModified",
    "LifecycleModel",
    "Lifecycles",
    "PageState",
    "Renderer",
    "Robots",
    "SettingsError",
    "SimWeb",
    "SimWebProcess",
    "SimWebProcessError",
    "SimWebResolver",
    "SimWebServer",
    "SimWebSettings",
    "UnknownURL",
    "UntypedResponse",
    "age_graph",
    "aging_lifecycle",
    "independent_lifecycles",
    "serve_until_stopped",
    "shared_clock",
    "simweb_graph",
]
