"""pto-ir: PyPTO's SK-03 linear projection through three MLIR-style levels.

`pto` (tensors) -> `tile` (V/C stages, token loop, tile shapes) -> `npu` (buffers,
DMA on pipes, cores). See README.md for the tour. The Python API (`pto.Kernel`,
`pto.rms_norm`, `pto.trace`, `pto.compile`, `pto.run`, ...) is `pto.frontend`,
re-exported here on first use so that the command-line tools do not load it.
"""

__version__ = "0.1.0"


def __getattr__(name: str):
    import importlib

    frontend = importlib.import_module("pto.frontend")
    if name in frontend.__all__:
        return getattr(frontend, name)
    raise AttributeError(f"module 'pto' has no attribute '{name}'")


def __dir__() -> list[str]:
    import importlib

    frontend = importlib.import_module("pto.frontend")
    return sorted([*globals(), *frontend.__all__])
