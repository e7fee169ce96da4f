"""xyleme: build and keep fresh a warehouse of the XML data of the web.

The package holds the operator-facing parts (CLI, daemon wiring, configuration), the crawler
(Xyro, the only module that touches the network), the simulated web and the dashboard. The
algorithms live in the sibling packages ``loader``, ``metadata``, ``refresh`` and ``ranking``;
see ``docs/architecture.md`` for the data flow.
"""

__version__ = "0.1.0"
