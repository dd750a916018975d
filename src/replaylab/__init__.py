"""replaylab: replay and re-check agent runs that drive physics simulations through an allowlist."""

__version__ = "0.1.0"
