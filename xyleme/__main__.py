"""``python -m xyleme`` runs the CLI, so tests and scripts need no installed console script."""

from xyleme.cli import main

main()
