"""Benchmarks for dync: a suite of small dynamic neural networks (see `benchmarks.models`)."""
