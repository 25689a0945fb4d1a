"""Differential fuzzing of dync with generated dynamic PyTorch programs:
`python -m benchmarks fuzz --count N` (see `benchmarks.fuzz.run`)."""
