"""Test stand-in for ShinkaEvolve (see ../README.md)."""

__version__ = "0.0.0+fake"
