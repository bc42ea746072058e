"""The driver library behind `pto-opt`, `pto-run`, `pto-tune` and the Python API.

`parse` reads IR with source locations, `verify` checks it op by op, `pipelines`
parses pass pipelines and knows the named ones and where each level ends, `lower`
runs a pipeline through xDSL's `PassPipeline` with MLIR-style instrumentation
(print, time, crash reproducer), `registry` lists the dialects and passes, `limits`
the resource limits of a run. The tools in `pto.tools` only read flags and print;
nothing but an entry point imports them.
"""
