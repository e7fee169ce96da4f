"""The metadata manager (paper §4): Map-, Refresh-, Link- and Status-Data on SQLite."""
