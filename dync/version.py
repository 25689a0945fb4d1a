"""dync's version, importable without importing the package's API (the compile cache
records it)."""

__version__ = "0.1.0"
