"""Where the tests find the project: its root, wherever a test file sits under tests/."""

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
"""The repository's root folder."""
