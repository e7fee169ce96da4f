"""The XML loader: parse, validate and store XML documents and their versions (paper §2–3)."""
