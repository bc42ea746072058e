"""pto-ir: PyPTO's SK-03 linear projection through three MLIR-style levels.

`pto` (tensors) -> `tile` (V/C stages, token loop, tile shapes) -> `npu` (buffers,
DMA on pipes, cores). See README.md for the tour.
"""

__version__ = "0.1.0"
