"""ONNX conformance: the ONNX backend node tests of the installed `onnx` wheel through
`dync.compile`, each outcome held to a side table of expected failures with reasons
(`expected.json`) and compared with IREE's own CPU results (`iree_cpu.json`).
`python -m benchmarks conformance --help`."""
