"""Outputs assembled in column windows: `assemble(nope, [row, 0], out)` and
`assemble(rope, [row, 448], out)` with `out` a `[T, 512]` output (mla_prolog_quant_v4's
kv_out), each tile narrower than the output.

Each factor's body records its windows per output. Once they cover the output's
columns they are the output's value: their `pto.concat` marked `pto.assemble`, which
`pto-to-tile` lowers to one store per window (`tile.store %t, %out[%i, 448]`, a DMA of
the tile into the output's columns), not a copy into one tile first. Refused, where the
result would be silently wrong: windows that overlap (which write lands last is not
modelled) and columns never assembled (PyPTO leaves them as the caller's array holds
them; here an output is a value computed whole).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
from xdsl.dialects.builtin import UnitAttr

from pto.dialects.pto import ASSEMBLE
from pto.frontend.checks import BuildError, _is_int, caller
from pto.pypto import perm
from pto.pypto.errors import refuse
from pto.pypto.tensor import Site, Tensor, Trace


@dataclass
class Windows:
    """One output's windows in one body: first column -> tile."""

    at: Site | None  # the first assemble: where a gap is reported
    tiles: dict[int, Tensor] = field(default_factory=dict)


def is_window(src: Tensor, offsets: list, dst: Tensor) -> bool:
    """A tile of an output at `[row, 0, ..., c]` that is not whole rows at `[row, 0, ...]`:
    columns of a rank-2 output, or of the last dim of a higher-rank one (every other
    dim whole)."""
    if len(offsets) != len(dst.shape) or len(src.shape) != len(dst.shape) or len(dst.shape) < 2:
        return False
    if src.shape[1:-1] != dst.shape[1:-1] or any(o != 0 for o in offsets[1:-1]):
        return False
    c, w, width = offsets[-1], src.shape[-1], dst.shape[-1]
    return _is_int(c) and _is_int(w) and _is_int(width) and (c, w) != (0, width)


def put(tr: Trace, src: Tensor, offsets: list, dst: Tensor, concat: Callable[[list[Tensor], int], Tensor]) -> None:
    """Record the window; the one that completes the columns makes the output's value.
    Of a `[T, H, D]` output, each token's H * D columns are its row: a window of the
    last dim is one window of that row per row of the grid (pypto/perm.py)."""
    if len(dst.shape) == 2:
        return _put(tr, src, offsets[1], offsets, dst, concat)
    blocks, mid = perm.rows_of(src)
    d = dst.shape[-1]
    for h, tile in enumerate(blocks):
        _put(tr, tile, h * d + offsets[-1], offsets, dst, concat)
    del mid


def _width(dst: Tensor) -> int:
    return math.prod(dst.shape[1:])


def _put(tr: Trace, src: Tensor, c: int, offsets: list, dst: Tensor, concat) -> None:
    param = dst._param
    assert param is not None  # (assemble checked that dst is an output parameter)
    w, width, name = src.shape[1], _width(dst), tr.names[param]
    if not 0 <= c <= width - w:
        refuse(f"pypto.assemble of {src.shape} at {offsets} into '{name}': columns [{c}, {c + w}) are outside it")
    if any(p == param for p, _ in tr.assembled[tr.iteration]):
        refuse(f"pypto.assemble into '{name}' at {offsets}: its columns are all assembled already in this loop body")
    win = tr.windows[tr.iteration].setdefault(param, Windows(caller()))
    for c2, t2 in win.tiles.items():
        if c < c2 + t2.shape[1] and c2 < c + w:
            refuse(
                f"pypto.assemble of {src.shape} at {offsets} into '{name}': columns [{c}, {c + w}) overlap "
                f"[{c2}, {c2 + t2.shape[1]}) assembled before (which write lands last is not modelled: "
                "assemble each column once)"
            )
    win.tiles[c] = src
    if sum(t.shape[1] for t in win.tiles.values()) < width:
        return
    value = concat([win.tiles[k] for k in sorted(win.tiles)], -1)
    if tr.emit:
        value.built.value.owner.attributes[ASSEMBLE] = UnitAttr()
    if len(dst.shape) > 2:
        value = perm.store_shape(perm.make([value], np.arange(width).reshape(dst.shape[1:])))
    del tr.windows[tr.iteration][param]
    tr.assembled[tr.iteration].append((param, value))
    if tr.iteration == 0:
        tr.outputs[param] = value


def pending(tr: Trace, param: int) -> bool:
    """Whether this body has assembled some of the output's windows, not all."""
    return param in tr.windows[tr.iteration]


def check_covered(tr: Trace) -> None:
    """After the loop: every output assembled in windows has all its columns."""
    for body in tr.windows:
        for param, win in body.items():
            width = _width(tr.params[param])
            have = sorted((c, c + t.shape[1]) for c, t in win.tiles.items())
            at, gaps = 0, []
            for a, z in [*have, (width, width)]:
                if a > at:
                    gaps.append(f"[{at}, {a})")
                at = z
            raise BuildError(
                f"pto.pypto: pypto.assemble into '{tr.names[param]}' {tr.params[param].shape} in column windows "
                f"leaves columns {', '.join(gaps)} unassembled: PyPTO leaves them as the caller's array holds "
                "them, which this model (an output is computed whole) does not; assemble every column",
                win.at,
            )
