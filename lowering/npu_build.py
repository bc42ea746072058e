"""Small builders shared by `tile-to-npu` and its column tiling."""

from __future__ import annotations

from collections.abc import Callable

from xdsl.builder import ImplicitBuilder
from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import IndexType
from xdsl.ir import Block, Operation, Region, SSAValue

from pto.diagnostics import DiagnosticError
from pto.dialects import npu
from pto.dialects.npu import Pipe


def index_const(v: int) -> SSAValue:
    """An index constant."""
    return arith.ConstantOp.from_int_and_width(v, IndexType()).result


def sync(src: Pipe, dst: Pipe, event: int = 0) -> None:
    """Order everything before on `src` before everything after on `dst`."""
    npu.SetFlagOp(src, dst, event)
    npu.WaitFlagOp(src, dst, event)


def unrolled(
    n: int, index: Callable[[int], SSAValue], bound: SSAValue | None, emit: Callable[[SSAValue, int], None]
) -> None:
    """Copies 0..n-1 of an unrolled loop body: copy j gets its index `index(j)` and runs
    only while that is below `bound` (copy 0 always; every copy when `bound` is None)."""
    for j in range(n):
        at = index(j)
        if j == 0 or bound is None:
            emit(at, j)
            continue
        guard = Block()
        with ImplicitBuilder(guard):
            emit(at, j)
            scf.YieldOp()
        scf.IfOp(arith.CmpiOp(at, bound, "ult").result, [], Region(guard))


def unsupported(op: Operation, what: str) -> DiagnosticError:
    return DiagnosticError(op, f"tile-to-npu does not support {what} yet")


def valid_rows(row: SSAValue, end: SSAValue, rows: int) -> SSAValue:
    """min(end - row, rows), and 0 for a tile that starts at or past `end` (a tail
    body's missing tiles: they move and store nothing)."""
    v = arith.MinUIOp(arith.SubiOp(arith.MaxUIOp(end, row), row), index_const(rows)).result
    v.name_hint = "rows"
    return v


def divide(x: SSAValue, d: float, tmp: SSAValue, dst: SSAValue | None = None) -> None:
    """dst (default x) = x / d per row, with `tmp` a [rows, 1] f32 buffer: the goldens
    divide (np.mean, SK03.md's amax / 127), and a multiply by 1 / d differs from that in
    the last bit for most d, which flips int8 values at .5 ties after quant."""
    npu.VDupOp(float(d), tmp)
    npu.VDivOp(x, tmp, x if dst is None else dst)
