"""Small builders shared by `tile-to-npu` and its column tiling."""

from __future__ import annotations

from xdsl.dialects import arith
from xdsl.dialects.builtin import IndexType
from xdsl.ir import Operation, SSAValue

from pto.diagnostics import DiagnosticError
from pto.dialects import npu
from pto.dialects.npu import Pipe


def c(v: int) -> SSAValue:
    """An index constant."""
    return arith.ConstantOp.from_int_and_width(v, IndexType()).result


def sync(src: Pipe, dst: Pipe, event: int = 0) -> None:
    """Order everything before on `src` before everything after on `dst`."""
    npu.SetFlagOp(src, dst, event)
    npu.WaitFlagOp(src, dst, event)


def unsupported(op: Operation, what: str) -> DiagnosticError:
    return DiagnosticError(op, f"tile-to-npu does not support {what} yet")


def valid_rows(row: SSAValue, end: SSAValue, rows: int) -> SSAValue:
    """min(end - row, rows), and 0 for a tile that starts at or past `end` (a tail
    body's missing tiles: they move and store nothing)."""
    v = arith.MinUIOp(arith.SubiOp(arith.MaxUIOp(end, row), row), c(rows)).result
    v.name_hint = "rows"
    return v
