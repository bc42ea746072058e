"""How a loop body writes its outputs: `pypto.assemble` (and `out[i:i + p, :] = y`, which
is it): a token tile's rows of an output parameter, column windows of a 2-D output
(`windows`), rows of a scratch tile (`scratch`), a rank-3 grid's blocks (`perm`), an
`[H, T, D]` output's heads (`heads_first`)."""

from __future__ import annotations

from pto.pypto import heads_first, ops, perm, row_loops, scratch, tcols, whole, windows
from pto.pypto.errors import refuse
from pto.pypto.loops import _check_rows
from pto.pypto.tensor import Tensor, current


def assemble(*args, parallel: bool = False) -> None:
    """`assemble(tile, [row, 0], out)`: the token tile's rows of the output parameter; at
    `[row, c]` a narrower tile's columns of a 2-D output (`windows`). PyPTO's list form,
    `assemble([(a, [row, 0]), (b, [row, c])], out, parallel=True)`, is each in turn (what
    `parallel` lets the device overlap, the model's pipes overlap anyway)."""
    tr = current("pypto.assemble")
    if len(args) == 2 and isinstance(args[0], list | tuple):  # ([(src, offsets), ...], dst): each in turn
        srcs, dst = args
        if not all(isinstance(s, list | tuple) and len(s) == 2 for s in srcs):
            refuse("pypto.assemble(srcs, dst) takes a list of (tensor, offsets) pairs and the tensor to write")
        for src, offsets in srcs:
            assemble(src, offsets, dst)
        return None
    if len(args) != 3:
        refuse(f"pypto.assemble(src, offsets, dst) or assemble([(src, offsets), ...], dst), got {len(args)} arguments")
    src, offsets, dst = args
    if isinstance(dst, Tensor):
        dst = whole.target(dst)  # (an output's whole-rows tile, in a kernel with no loop: the output)
    if isinstance(dst, Tensor) and dst.declared():  # `pypto.Tensor([rows, W], dt)` in the body: a scratch tile
        dst.__dict__.update(scratch.make(dst.shape, dst._dtype).__dict__)
    if tcols.is_tcol(src):
        refuse(f"pypto.assemble of a {src.shape} tensor whose tokens are not dim 0: transpose them back to dim 0 first")
    if heads_first.is_heads_first(src):
        return heads_first.put(tr, src, list(offsets), dst)
    if scratch.is_scratch(src):  # (its blocks' concat: of rank 3, perm's value, which the branches below take)
        src = ops._tensor(src, "pypto.assemble's tile")
    if scratch.is_scratch(dst):
        if not isinstance(src, Tensor):
            refuse("pypto.assemble takes a computed tensor, offsets and a tensor to write")
        return scratch.put(ops._tensor(src, "pypto.assemble's tile"), list(offsets), dst)
    if perm.is_perm(src) and isinstance(dst, Tensor) and dst._param is not None:
        if windows.is_window(src, list(offsets), dst) and tr.loop is not None and tr.iteration >= 0:
            if src._dtype is not dst._dtype:
                what = f"a {src.known_dtype.name} tile into a {dst.known_dtype.name} output"
                refuse(f"pypto.assemble of {what}: cast it first")
            _check_rows(tr, offsets[0], None, src.shape[0], "pypto.assemble", dst.shape[0])
            tr.seen_token.add(dst._param)
            return windows.put(tr, src, list(offsets), dst, ops.concat)
        src = perm.store_shape(src)  # a grid: its 2-D tile, seen with the output's dims
    if row_loops.is_row(src):
        refuse(
            "pypto.assemble of a row of a tile (a view [1, K] at [r, 0]) into an output: rows taken one at a "
            "time are written into a scratch tile (s = pypto.tensor(...); s[r:r + 1, 0:] = row), read whole"
        )
    if isinstance(src, Tensor) and src._lazy is not None and src._lazy[0] == "heads":
        refuse("pypto.assemble of a per-head view ([rows * H, D]): reshape it back to [rows, H * D] first")
    if isinstance(src, Tensor) and src._lazy is not None:  # a split-K sum, a slice, a reciprocal
        src = ops._tensor(src, "pypto.assemble's tile")
    if not isinstance(src, Tensor) or src._lazy is not None or not isinstance(dst, Tensor):
        refuse("pypto.assemble takes a computed tensor, offsets and an output parameter")
    if dst._param is None:
        refuse("pypto.assemble into a scratch tensor is not supported: assemble into an output parameter")
    if tr.loop is None or tr.iteration < 0 or not src._tok:
        refuse("pypto.assemble writes token tiles inside the token loop")
    if src._body not in (-1, tr.iteration):
        refuse("pypto.assemble of a tile computed in the loop body for another unroll factor")
    offsets = list(offsets)
    window = windows.is_window(src, offsets, dst)
    if not window and (
        len(offsets) != len(dst.shape) or any(o != 0 for o in offsets[1:]) or src.shape[1:] != dst.shape[1:]
    ):
        refuse(
            f"pypto.assemble of {src.shape} at {offsets} into {dst.shape}: whole rows at [row, 0, ...], "
            "or a column window [row, c] of a 2-D output, only"
        )
    if src._dtype is not dst._dtype:
        refuse(f"pypto.assemble of a {src.known_dtype.name} tile into a {dst.known_dtype.name} output: cast it first")
    _check_rows(tr, offsets[0], None, src.shape[0], "pypto.assemble", dst.shape[0])
    tr.seen_token.add(dst._param)
    if window:
        return windows.put(tr, src, offsets, dst, ops.concat)
    if dst._param in tr.outputs and tr.iteration == 0 or windows.pending(tr, dst._param):
        refuse("each output parameter is assembled once per loop body (whole rows, or column windows each once)")
    tr.assembled[tr.iteration].append((dst._param, src))
    if tr.iteration == 0:
        tr.outputs[dst._param] = src
