"""`pto-join-n-windows`: matmuls of one activation and the N windows of one weight are
that weight's one matmul.

PyPTO authors tile N by hand, with a Python loop that the trace unrolls:

    for j in range(N // NT):
        out[rows, j * NT:(j + 1) * NT] = pypto.matmul(xt, w[j * NT:(j + 1) * NT, :], ..., b_trans=True)

That is SK-03's one matmul over all N, each window its columns; the cube tiles N
itself (tile-assign-shapes decides how, once). So

    %w0 = pto.view %w at [0, 0]   : tensor<512x256xbf16> -> tensor<128x256xbf16>
    %y0 = pto.matmul %x, %w0 b_trans : ... -> tensor<?x128xf32>
    %w1 = pto.view %w at [128, 0] : ...
    %y1 = pto.matmul %x, %w1 b_trans : ...            (and so on to N)

becomes

    %y  = pto.matmul %x, %w b_trans : ... -> tensor<?x512xf32>
    %y0 = pto.slice %y at 0   : tensor<?x512xf32> -> tensor<?x128xf32>
    %y1 = pto.slice %y at 128 : ...

when the matmuls read one activation value, have the same flags, result type and
attributes (a label aside: the joined matmul takes the first's), and their windows take
all of K and cover N once (rows of an [N, K] weight with b_trans, columns of a [K, N]
one). Anything else is left alone: windows that
miss a column would be computed here but not in the kernel, and pto-classify-skeleton
says why several matmuls are not SK-03.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.dialects.func import FuncOp
from xdsl.ir import Attribute, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from pto.dialects import pto
from pto.dialects.pto import tensor_type

# The slices take the view's vector tile hint: the view and its matmul were traced together.
VEC_TILE = "pto.vec_tile"
LABEL = "pto.label"
# One window is a matmul of that window's weight, as written; two or more are a join.
MIN_WINDOWS = 2


def _window(mm: pto.MatmulOp) -> tuple[int, int] | None:
    """The columns [n0, n1) of N that `mm`'s weight view takes with all of K, or None."""
    view = mm.rhs.owner
    if not isinstance(view, pto.ViewOp):
        return None
    whole, part = tensor_type(view.input).get_shape(), tensor_type(view.result).get_shape()
    if len(whole) != 2:
        return None
    n_dim = 0 if mm.b_trans else 1
    k_dim = 1 - n_dim
    if view.starts[k_dim] != 0 or part[k_dim] != whole[k_dim]:
        return None
    n0 = view.starts[n_dim]
    return n0, n0 + part[n_dim]


def _key(mm: pto.MatmulOp) -> tuple:
    view = mm.rhs.owner
    assert isinstance(view, pto.ViewOp)
    # (a label per window, `set_semantic_label(f"mm{n}")`, names one matmul: the first's)
    attrs = tuple(sorted((k, str(v)) for k, v in mm.attributes.items() if k != LABEL))
    return (mm.lhs, view.input, bool(mm.a_trans), bool(mm.b_trans), tensor_type(mm.result).element_type, attrs)


def covers(windows: list[tuple[int, int]], n: int) -> bool:
    ordered = sorted(windows)
    return ordered[0][0] == 0 and ordered[-1][1] == n and all(a[1] == b[0] for a, b in itertools.pairwise(ordered))


def _join(group: list[pto.MatmulOp]) -> None:
    first = group[0]
    view = first.rhs.owner
    assert isinstance(view, pto.ViewOp)
    whole: SSAValue = view.input
    m = tensor_type(first.result).get_shape()[0]
    n = tensor_type(whole).get_shape()[0 if first.b_trans else 1]
    rtype = TensorType(tensor_type(first.result).element_type, [m, n])
    joined = pto.MatmulOp(first.lhs, whole, rtype, a_trans=bool(first.a_trans), b_trans=bool(first.b_trans))
    joined.attributes.update(first.attributes)
    joined.location = first.location
    Rewriter.insert_op(joined, InsertPoint.before(first))
    slices = []
    for mm in group:
        win = _window(mm)
        assert win is not None
        part = mm.rhs.owner
        assert isinstance(part, pto.ViewOp)
        cols = pto.SliceOp(joined.result, win[0], win[1] - win[0])
        cols.location = mm.location
        hint: Attribute | None = part.attributes.get(VEC_TILE)
        if hint is not None:
            cols.attributes[VEC_TILE] = hint
        Rewriter.replace_op(mm, cols)
        slices.append(cols)
        if not part.result.uses:
            Rewriter.erase_op(part)
    _fold_concat(joined, slices)


def _fold_concat(joined: pto.MatmulOp, slices: list[pto.SliceOp]) -> None:
    """The windows written side by side, in order, are the joined result itself (no
    column slices for the vector phase to carry)."""
    users = {u.operation for s in slices for u in s.result.uses}
    if len(users) != 1 or not all(s.result.has_one_use() for s in slices):
        return
    concat = users.pop()
    if not isinstance(concat, pto.ConcatOp) or concat.result.type != joined.result.type:
        return
    ordered = sorted(slices, key=lambda s: s.start)
    if [v.owner for v in concat.inputs] != ordered:
        return
    concat.result.replace_all_uses_with(joined.result)
    Rewriter.erase_op(concat)
    for s in slices:
        Rewriter.erase_op(s)


def window_groups(func: FuncOp) -> list[tuple[list[pto.MatmulOp], list[tuple[int, int]], int]]:
    """The matmuls of one activation and N windows of one weight alike, two or more: each
    group with its windows and the weight's N (pto-classify-skeleton names those left)."""
    groups: dict[tuple, list[pto.MatmulOp]] = {}
    for op in func.body.walk():
        if isinstance(op, pto.MatmulOp) and _window(op) is not None:
            groups.setdefault(_key(op), []).append(op)
    found = []
    for group in groups.values():
        if len(group) >= MIN_WINDOWS:
            view = group[0].rhs.owner
            assert isinstance(view, pto.ViewOp)
            n = tensor_type(view.input).get_shape()[0 if group[0].b_trans else 1]
            found.append((group, [w for mm in group if (w := _window(mm)) is not None], n))
    return found


def join_windows(func: FuncOp) -> None:
    for group, windows, n in window_groups(func):
        if covers(windows, n):
            _join(group)


@dataclass(frozen=True)
class PtoJoinNWindowsPass(ModulePass):
    """Join matmuls of one activation and the N windows of one weight into its one matmul."""

    name = "pto-join-n-windows"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for func in op.walk():
            if isinstance(func, FuncOp):
                join_windows(func)
