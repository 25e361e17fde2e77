"""Oracles: the list-based reference forms the engine is held to."""
