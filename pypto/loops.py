"""The token loop (`loop_unroll`, `loop`) and the views that take token tiles, as
PyPTO's (the hint setters: pypto/hints.py; `assemble`: pypto/outputs.py).

The pto level computes on whole tensors, so a token-tile view is its whole tensor and
the loop becomes `pto.unroll` (for `pypto.loop` with `TILE`-row views, `[TILE]` and
`pto.tail`: one partial tile for the remainder; its manual tails, pypto/tails.py). Where
a tile starts and how many of its rows are valid are checked by evaluating the user's
expressions at sample token counts: they must be the loop's own tiles, every row once.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterator, Sequence

from xdsl.dialects.builtin import DenseArrayBase, DictionaryAttr, i64
from xdsl.ir import Attribute, Operation

from pto.dialects.common import nz_window_error
from pto.frontend import builder as b
from pto.frontend import views
from pto.frontend.checks import BuildError, _is_int, caller
from pto.pypto import expand, ops, perm, row_loops, split_k, tails, tcols, windows
from pto.pypto.errors import not_modelled, refuse
from pto.pypto.sym import KnownIndex, Sym, evaluate, no_value
from pto.pypto.tensor import Loop, Tensor, Trace, current
from pto.pypto.types import elem
from pto.targets import load_target


def _range(args: tuple) -> tuple:
    if not 1 <= len(args) <= 3:
        refuse(f"the loop takes 1 to 3 positional arguments (stop | start, stop[, step]), got {len(args)}")
    start, stop, step = (0, args[0], 1) if len(args) == 1 else (*args, 1)[:3]
    for v in (start, stop, step):
        if not isinstance(v, Sym) and not _is_int(v):
            refuse(f"loop bounds must be integers or the token count, got {v!r}")
    return start, stop, step


def _loop_kwargs(kwargs: dict, allowed: set[str]) -> None:
    for k in kwargs:
        if k not in allowed:
            refuse(f"unknown loop argument '{k}' (known: {', '.join(sorted(allowed))})")


def loop_unroll(*args, **kwargs) -> Iterator[tuple[Sym, int]]:
    """The token loop, its body traced once per unroll factor (descending, 1 added)."""
    tr = current("pypto.loop_unroll")
    _entered(tr, False)
    _one_loop(tr)
    _loop_kwargs(kwargs, {"name", "idx_name", "unroll_list", "submit_before_loop"})
    start, stop, step = _range(args)
    if start != 0 or step != 1:
        refuse(f"loop_unroll must run over the whole token axis (0, T, 1), got ({start}, {stop}, {step})")
    factors = kwargs.get("unroll_list", [1])
    # any collection, as PyPTO's sorted(set(unroll_list)) (a model's powers_of_2() is a set)
    if not isinstance(factors, list | tuple | set | frozenset | range) or not factors:
        refuse(f"unroll_list must be a list of positive integers, got {factors!r}")
    if not all(_is_int(f) and f > 0 for f in factors):
        refuse(f"unroll_list must be a list of positive integers, got {factors!r}")
    norm = sorted(set(factors), reverse=True) + ([] if 1 in factors else [1])
    unit = _block_rows(stop) or 1
    rows = [f * unit for f in norm]
    tr.loop = Loop("unroll", stop, rows, index=Sym(kwargs.get("idx_name") or "idx"), at=caller(), unit=unit)
    yield from _iterations(tr, rows, lambda p: (tr.loop.index, p // unit))


# The largest block a loop_unroll's stop is looked for as ceil(T / B) with.
MAX_BLOCK_ROWS = 1024


def _block_rows(stop: object) -> int | None:
    """B when `stop` is ceil(T / B), B > 1: a loop_unroll over B-row blocks of the tokens
    (PyPTO's performance guide's form); None otherwise."""
    if not isinstance(stop, Sym):
        return None
    b = next((t for t in range(1, MAX_BLOCK_ROWS + 1) if evaluate(stop, {"T": t + 1}) == 2), None)
    if b is None or b == 1:
        return None
    samples = (1, b - 1, b, b + 1, 2 * b + 3, 10**6 + 1)
    return b if all(evaluate(stop, {"T": t}) == -(-t // b) for t in samples) else None


def loop(*args, **kwargs) -> Iterator[Sym | int]:
    """`for i in pypto.loop(n)`: a token loop whose views take `TILE`-row tiles."""
    tr = current("pypto.loop")
    _entered(tr, len(args) in (1, 2, 3) and all(_is_int(v) for v in args))
    _loop_kwargs(kwargs, {"name", "idx_name", "unroll_list", "submit_before_loop"})
    if kwargs.get("unroll_list") not in (None, [1]):
        # PyPTO unrolls the body's iterations as they are written (the tiles keep their
        # rows): each iteration is one body here, as a loop without the list
        not_modelled("pypto.loop's unroll_list (each iteration runs as one body, the same work)", tr.notes)
    start, stop, step = _range(args)
    index = Sym(kwargs.get("idx_name") or "idx")
    if tr.loop is not None and tr.iteration >= 0 and all(_is_int(v) for v in (start, stop, step)):
        yield from _n_tiles(range(start, stop, step))
        return
    if tr.loop is not None:  # a second loop: the rows a loop of whole tiles leaves
        tails.start_rest(tr, start, stop, step, index)
        yield from _rest(tr, index)
        return
    tr.loop = Loop("loop", stop, start=start, step=step, index=index, at=caller())
    yield from _branches(tr)


def _n_tiles(steps: range) -> Iterator[int]:
    """A loop of a known trip count in the body (over N tiles): unrolled, the same work as
    PyPTO's loop of it (a matmul per N window of one weight is joined by pto-join-n-windows).
    Its index keeps PyPTO's SymbolicScalar methods (`KnownIndex`)."""
    for i in steps:
        yield KnownIndex(i)


def _entered(tr: Trace, numbers: bool) -> None:
    """A loop call, its bounds `numbers` or not. In a body traced as one tile of all its
    rows (pypto/whole.py) a loop of numbers is one over N tiles; any other is a token
    loop: the kernel has its own after all, and its first trace's error is said instead."""
    tr.looped = "numbers" if numbers and tr.looped != "token" else "token"
    if tr.whole and not numbers:
        refuse("a token loop in a kernel traced as one tile of all its rows")


def _one_loop(tr: Trace) -> None:
    if tr.loop is not None:
        refuse("an SK-03 kernel has one token loop (a second loop or a nested one is not supported)")


def _begin_body(tr: Trace, entry: b.Pinned) -> None:
    """Trace the loop body once more: from the hints at `entry`, its ops kept apart."""
    b._pinned[-1] = dataclasses.replace(entry)
    tr.iteration = len(tr.sigs)
    tr.sigs.append([])
    tr.body_ops.append([])
    tr.assembled.append([])
    tr.windows.append({})


def _iterations(tr: Trace, factors: list[int], value) -> Iterator:
    entry = dataclasses.replace(b._pinned[-1])
    for p in factors:
        _begin_body(tr, entry)  # each factor's body starts from the hints at the loop
        tr.loop.p = p  # type: ignore[union-attr]
        yield value(p)
    tr.iteration = -1
    windows.check_covered(tr)
    _same_bodies(tr, factors)
    for i in range(1, len(factors)):
        if _other_ops(tr, i):
            refuse(
                f"the loop body traced for p={factors[i]} computes other ops than for p={factors[0]}: "
                "one body for every factor is supported"
            )
        _factor_hints(tr, i, factors[i])


def _other_ops(tr: Trace, i: int) -> bool:
    """Whether body `i` records other pypto ops than the first (the probe's check too)."""
    return [s[0] for s in tr.sigs[i]] != [s[0] for s in tr.sigs[0]]


def _factor_hints(tr: Trace, i: int, factor: int) -> None:
    """Body `i`'s tile hints, where they differ from the first's, pinned for `factor`."""
    sig, first = tr.sigs[i], tr.sigs[0]
    if [s[1] for s in sig] != [s[1] for s in first]:
        not_modelled("labels that differ by unroll factor (the first factor's are used)", tr.notes)
    if tr.emit:
        for op, mine, base in zip(tr.emitted, sig, first, strict=True):
            if mine[2] != base[2] and mine[2] is not None:
                _pin_for_factor(op, factor, mine[0], mine[2])


def _branches(tr: Trace) -> Iterator[Sym]:
    """A pypto.loop's body, traced once per path of outcomes of the tail tests it
    branches on (once if none, pypto/tails.py). Every path must compute what the first
    does: the body kept is the first's, a loop whose last tile is partial."""
    lp = tr.loop
    assert lp is not None
    entry = dataclasses.replace(b._pinned[-1])
    tr.plan = plan = tails.Plan()
    more = True
    while more:
        _begin_body(tr, entry)
        yield lp.index
        more = plan.next()
    tr.plan, tr.iteration = None, -1
    windows.check_covered(tr)
    tails.check_tests(tr, plan)
    for i in range(1, len(tr.sigs)):
        where = _body_differs(tr, i) or _hints_differ(tr.sigs[i], tr.sigs[0])
        if where is not None:
            test, site = plan.first_site()
            raise BuildError(f"pto.pypto: {no_value(test.left)}; here its branches differ in {where}", site)
    _erase_bodies(tr, 1)


def _hints_differ(sig: list[tuple], first: list[tuple]) -> str | None:
    """Where a path's pypto ops or their hints differ from the first path's, or None."""
    for n, (mine, base) in enumerate(zip(sig, first, strict=False)):
        if mine != base:
            return f"its pypto op #{n + 1} ({f'{base[0]} and its hints' if mine[0] == base[0] else mine[0]})"
    return "the number of ops it computes" if len(sig) != len(first) else None


def _rest(tr: Trace, index: Sym) -> Iterator[Sym]:
    """The second loop of a pair (`tails.start_rest`): its body, which must be the
    first's; the kernel is then loop_unroll's cascade [TILE, rows of its tiles]."""
    _begin_body(tr, dataclasses.replace(b._pinned[-1]))  # (from the hints the first loop left)
    yield index
    i, tr.iteration = len(tr.sigs) - 1, -1
    windows.check_covered(tr)
    rows = tails.rest_rows(tr)
    if (where := _body_differs(tr, i) or ("the ops it computes" if _other_ops(tr, i) else None)) is not None:
        refuse(
            f"the second pypto.loop's body differs from the first's in {where}: the two loops (whole tiles, "
            "then the rows left) must compute one body"
        )
    _factor_hints(tr, i, rows)
    _erase_bodies(tr, i)


# Attributes a factor's body may set for itself: the hints (`_pin_for_factor` keeps them).
_HINTS = ("pto.label", "pto.vec_tile", "pto.cube_tile")


def _same_bodies(tr: Trace, factors: list[int]) -> None:
    """Each factor's body computes what the first's does, from the same values with the
    same scalars and attributes (not only the same ops), and assembles the same tiles
    into the same outputs: the kernel has one body. The other factors' ops are erased."""
    for i in range(1, len(factors)):
        if (where := _body_differs(tr, i)) is not None:
            refuse(
                f"the loop body traced for p={factors[i]} differs from the one for p={factors[0]} in {where}: "
                "one body for every factor is supported"
            )
    _erase_bodies(tr, 1)


def _erase_bodies(tr: Trace, first: int) -> None:
    """Erase the ops of the bodies from `first` on (each computes what the first body does)."""
    for body in reversed(tr.body_ops[first:]):
        for op in reversed(body):
            op.detach()
            op.erase()
        body.clear()


def _body_differs(tr: Trace, i: int) -> str | None:
    """Where factor `i`'s body differs from the first's, or None."""
    mine, first = tr.assembled[i], tr.assembled[0]
    if [d for d, _ in mine] != [d for d, _ in first]:
        return "the outputs it assembles into"
    if not tr.emit:
        return None
    same: dict = {}  # this factor's values -> the first's
    for n, (a, o) in enumerate(zip(tr.body_ops[0], tr.body_ops[i], strict=False)):
        if not _same_op(a, o, same):
            return f"its op #{n + 1} ({a.name}: an operand, a scalar or an attribute)"
    if len(tr.body_ops[0]) != len(tr.body_ops[i]):
        return "the number of ops it computes"
    if any(same.get(v, v) is not w for v, w in zip(_tiles(mine), _tiles(first), strict=True)):
        return "the tiles it assembles"
    return None


def _tiles(assembled: list[tuple[int, Tensor]]) -> list:
    return [src.built.value for _, src in assembled]


def _same_op(a: Operation, o: Operation, same: dict) -> bool:
    """`o` does what `a` does, on the values `same` maps its operands to (then maps its results)."""
    attrs = lambda op: {k: v for k, v in op.attributes.items() if k not in _HINTS}  # noqa: E731
    if (
        a.name != o.name
        or a.properties != o.properties
        or attrs(a) != attrs(o)
        or a.result_types != o.result_types
        or a.regions
        or o.regions
        or len(a.operands) != len(o.operands)
        or any(same.get(y, y) is not x for x, y in zip(a.operands, o.operands, strict=True))
    ):
        return False
    same.update(zip(o.results, a.results, strict=True))
    return True


def _pin_for_factor(op, factor: int, kind: str, tiles) -> None:
    """Tile shapes this factor's body sets for `op` (`pto.by_unroll`), as the builder would."""
    if kind == "matmul":
        hint: Attribute = tiles
    elif len(tiles) == op.operands[0].type.get_num_dims():  # the builder's rule for vec tiles
        hint = DenseArrayBase.from_list(i64, list(tiles))
    else:
        return
    name = "pto.cube_tile" if kind == "matmul" else "pto.vec_tile"
    per = dict(op.attributes["pto.by_unroll"].data) if "pto.by_unroll" in op.attributes else {}
    per[str(factor)] = DictionaryAttr({name: hint})
    op.attributes["pto.by_unroll"] = DictionaryAttr(per)


# ------------------------------------------------------------------ token tiles


def _check_rows(tr: Trace, offset, valid, rows: int, what: str, total: object) -> None:
    """The tile of `rows` rows at `offset` (valid: `valid`) is the loop's i-th tile."""
    lp = tr.loop
    assert lp is not None
    if lp.kind == "unroll":
        if not all(evaluate(lp.stop, {"T": t}) == -(-t // lp.unit) for t in tails.samples(total, rows)):
            refuse(
                f"loop_unroll must run over all the tokens ({total}), or over blocks of B of them "
                f"(ceil({total} / B)), got stop {lp.stop}: pypto.loop_unroll(0, {total}, 1, unroll_list=[...])"
            )
        ok = all(evaluate(offset, {"T": 10**6, lp.index.name: i}) == i * lp.unit for i in (0, 3, 17))
        ok = (
            ok
            and rows == lp.p
            and (valid is None or all(evaluate(valid, {"T": 10**6, lp.index.name: i}) == rows for i in (0, 3, 17)))
        )
        if not ok:
            at = lp.index if lp.unit == 1 else f"{lp.index} * {lp.unit}"
            refuse(f"{what} must take [p, ...] rows at [{at}, 0, ...] inside loop_unroll (p = {lp.p} rows)")
        return
    tails.check_rows(tr, offset, valid, rows, what, total)


def _row_of_tile(tr: Trace, x: Tensor, shape: list, offsets: list, valid) -> bool:
    """Row r of a 2-D tile of the loop body, `[1, K]` at `[r, 0]` with r a number."""
    return (
        x._tok
        and tr.iteration >= 0
        and x._lazy is None
        and len(shape) == 2
        and _is_int(x.shape[0])
        and shape == [1, x.shape[1]]
        and _is_int(offsets[0])
        and offsets[1] == 0
        and valid in (None, shape)
    )


def _tile_valid(tr: Trace, x: Tensor, valid, dims: list | None = None) -> bool:
    """`valid` is the valid_shape of a tile `x` of the loop body (of a view of it, `dims`):
    its valid rows at each iteration, and its other dims whole."""
    if not (x._tok and tr.iteration >= 0 and tr.loop is not None and valid[1:] == (dims or x.shape)[1:]):
        return False
    lp, rows = tr.loop, x.shape[0]
    total = tr.params[min(tr.token)].shape[0]
    if lp.kind == "unroll":
        return rows == lp.p and all(evaluate(valid[0], {"T": 10**6, lp.index.name: i}) == rows for i in (0, 3, 17))
    return lp.tile is not None and tails.check_valid(tr, valid[0], rows, total)


def _of_weight(tr: Trace, x: Tensor) -> bool:
    """`x` is a weight parameter or an in-place reshape of one."""
    p = x._param if x._param is not None else x._view_of
    return p is not None and p not in tr.token and not x._tok


def _weight_window(tr: Trace, x: Tensor, shape: list, offsets: list, valid) -> bool:
    """A static window of a weight parameter (or of its in-place reshape), read in place
    (`pto.view`)."""
    return (
        _of_weight(tr, x)
        and x._lazy is None
        and all(_is_int(d) for d in [*x.shape, *shape, *offsets])
        and valid in (None, shape)
        and all(0 <= o and 1 <= n and o + n <= d for o, n, d in zip(offsets, shape, x.shape, strict=True))
    )


def _narrowed_weight(tr: Trace, x: Tensor, shape: list, valid: list) -> bool:
    """A window of a weight parameter whose valid_shape (numbers) narrows it: its valid
    part is the window (the rest is never read)."""
    narrows = all(_is_int(v) and _is_int(s) and 1 <= v <= s for v, s in zip(valid, shape, strict=True))
    return narrows and _of_weight(tr, x)


def _reshaped_window(tr: Trace, x: Tensor, shape: list, offsets: list) -> Tensor:
    """A window of an in-place reshape of a weight that only adds or drops dims of size 1
    (`reshape(scale, [3, 1], inplace=True)[0:1, :]`): the window of the weight itself,
    seen with the window's dims."""
    w = tr.params[x._view_of]  # type: ignore[index]
    keep = [i for i, d in enumerate(x.shape) if d != 1]
    if [x.shape[i] for i in keep] != [d for d in w.shape if d != 1]:
        refuse(f"pypto.view of {shape} at {offsets} of a reshaped weight {w.shape} -> {x.shape}: only a reshape "
               "that adds or drops dims of size 1 is viewed in windows")  # fmt: skip
    it = iter(keep)
    at = {i: next(it) for i, d in enumerate(w.shape) if d != 1}
    part = ops.weight_view(w, [shape[at[i]] if i in at else 1 for i in range(len(w.shape))],
                           [offsets[at[i]] if i in at else 0 for i in range(len(w.shape))])  # fmt: skip
    return ops.reshape(part, list(shape), inplace=True)


def _nz_window(w: Tensor, shape: list, offsets: list) -> None:
    """A window of an NZ weight (a K slice of a split-K, one of stacked weights) is whole
    fractals, refused here at the view's line otherwise: the model reads its fractals."""
    if len(shape) != 2 or not all(_is_int(d) for d in [*shape, *offsets]):
        return  # (an NZ weight is 2-D; a symbolic window is refused as a view of a weight below)
    t = load_target()  # (a pypto kernel runs on the default target, whose fractal the verifier checks)
    if msg := nz_window_error(offsets, shape, elem(w._dtype, "the weight"), t.cube.fractal, t.block_bytes):
        refuse(f"pypto.view of the NZ weight '{w.name}': {msg}")


def _k_rows(w: Tensor, shape: list, offsets: list) -> bool:
    """Whole rows of a 2-D weight window (`_weight_window`): K rows of a `[K, N]` weight."""
    return len(shape) == 2 and shape[1] == w.shape[1] and offsets[1] == 0


def _columns(x: Tensor, shape: list, offsets: list, valid, of_view: bool = False) -> bool:
    """A view of whole rows and a range of the last axis (a K slice of a split-K) of a
    tensor (with `of_view`, of a column view too)."""
    return (
        len(shape) >= 2
        and shape[:-1] == x.shape[:-1]
        and all(o == 0 for o in offsets[:-1])
        and _is_int(offsets[-1])
        and _is_int(shape[-1])
        and 0 <= offsets[-1]
        and offsets[-1] + shape[-1] <= x.shape[-1]
        and valid in (None, shape)
        and (x._lazy is None or of_view)
    )


def _token_param(tr: Trace, x: Tensor, what: str) -> int:
    """The parameter a token tile is taken from (itself, or what an in-place reshape views)."""
    p = x._param if x._param is not None else x._view_of
    if p is None:
        refuse(f"{what} of a computed value is not supported: take token tiles of the kernel's parameters")
    if tr.params[p]._lazy == ("output", p):  # (known in the second run: the probe found the outputs)
        refuse(f"parameter '{tr.names[p]}' is both read and assembled into: in-place kernels are not supported")
    return p


def view(
    input: Tensor,
    shape: Sequence | None = None,
    offsets: Sequence | None = None,
    *,
    valid_shape=None,  # noqa: A002
    dtype=None,
) -> Tensor:
    tr = current("pypto.view")
    if not isinstance(input, Tensor) or input._shape is None:
        refuse(f"pypto.view's input must be a tensor of the kernel, got {input!r}")
    if dtype is not None:
        refuse("pypto.view with a dtype (a reinterpreting view) is not supported")
    if input._lazy is not None and input._lazy[0] in ("castcols", "rows"):  # a cast slice, a weight's rows: made here
        input = ops._tensor(input, "pypto.view's input")
    if tcols.is_tcol(input):
        return tcols.window(input, list(shape or input.shape), list(offsets or [0] * len(input.shape)), view)
    shape = list(shape) if shape is not None else input.shape
    offsets = list(offsets) if offsets is not None else [0] * len(shape)
    valid = list(valid_shape) if valid_shape is not None else None
    if len(shape) != len(input.shape) or len(offsets) != len(shape) or (valid and len(valid) != len(shape)):
        refuse(f"pypto.view of a rank-{len(input.shape)} tensor needs rank-{len(input.shape)} shape and offsets")
    if input.nz:
        _nz_window(input, shape, offsets)
    if expand.is_expand(input):
        return expand.window(input, shape, offsets, view)
    if perm.is_perm(input):
        if (w := perm.window(input, shape, offsets)) is None:
            refuse(
                f"pypto.view of a {input.shape} token tensor takes all its rows at offset 0, got {shape} at {offsets}"
            )
        return w
    if input._lazy is not None and input._lazy[0] == "cols" and _columns(input, shape, offsets, valid, True):
        # columns of a column view (corpus24's k221: a head's columns of a half of the
        # matmul's tile): those columns of the tensor it views
        _, base, c0, _ = input._lazy
        return split_k.column_view(base, c0 + offsets[-1], c0 + offsets[-1] + shape[-1])
    on_loop = isinstance(offsets[0], Sym) and tr.loop is not None and tr.loop.index.name in offsets[0].names
    rest_ok = (
        shape[1:] == input.shape[1:] and all(o == 0 for o in offsets[1:]) and (valid is None or valid[1:] == shape[1:])
    )
    if not on_loop:
        if shape == input.shape and all(o == 0 for o in offsets) and valid in (None, shape):
            return input  # the whole tensor
        if shape == input.shape and all(o == 0 for o in offsets) and _tile_valid(tr, input, valid):
            return input  # a tile of the body, with the valid rows it has (GLM-4.5's outputs)
        if shape == input.shape and all(o == 0 for o in offsets) and input._tok:
            refuse(
                f"pypto.view of a whole tile of the loop body with valid_shape {valid}: a view of it may "
                "narrow valid_shape only to the tile's own valid rows (those of the view it came from)"
            )
        if _row_of_tile(tr, input, shape, offsets, valid):  # GLM-4.5's per-row loop
            return row_loops.view(tr, input, offsets[0])
        if valid is not None and shape[0] == input.shape[0] and _tile_valid(tr, input, valid, shape):
            valid = None  # columns of a tile of the body, with the valid rows it has
        if valid is not None and _narrowed_weight(tr, input, shape, valid):
            # (a loop over N tiles of a weight whose last runs past N: PyPTO reads the valid part)
            shape, valid = list(valid), None
        if _columns(input, shape, offsets, valid):  # of a weight too: a hand-written split-K's K slice
            return split_k.column_view(input, offsets[-1], offsets[-1] + shape[-1])
        if _weight_window(tr, input, shape, offsets, valid) and input._param is None:
            return _reshaped_window(tr, input, shape, offsets)
        if _weight_window(tr, input, shape, offsets, valid):
            # In the loop body, rows of a [K, N] weight may be a split-K's K slice: kept aside
            # until used (a window made before the loop is the same view for every body).
            if tr.iteration >= 0 and _k_rows(input, shape, offsets):
                return split_k.row_view(input, offsets[0], offsets[0] + shape[0])
            return ops.weight_view(input, shape, offsets)
        refuse(
            f"pypto.view of {shape} at {offsets} is not supported yet: views here take whole tensors, "
            "token tiles [rows, ...] at [row, 0, ...], windows of a weight parameter, "
            "or columns [rows, w] at [0, c] of a 2-D tensor"
        )
    if not rest_ok and _tile_columns(input, shape, offsets, valid):
        # The rows' tile (one per body and rows: `_token_tile`), then its columns: the
        # column views of one rows tile are K slices of one tensor (a hand-written split-K),
        # and a cast of them one cast of it.
        rows_valid = None if valid is None else [valid[0], input.shape[1]]
        tile = view(input, [shape[0], input.shape[1]], [offsets[0], 0], valid_shape=rows_valid)
        return split_k.column_view(tile, offsets[1], offsets[1] + shape[1])
    if not rest_ok and len(shape) > 2 and (valid is None or valid[1:] == shape[1:]):
        # a box of each token's grid: the rows' whole grids, then the window of them
        rows = view(input, [shape[0], *input.shape[1:]], [offsets[0], *[0] * (len(shape) - 1)],
                    valid_shape=None if valid is None else [valid[0], *input.shape[1:]])  # fmt: skip
        if (w := perm.window(rows, [rows.shape[0], *shape[1:]], [0, *offsets[1:]])) is not None:
            return perm.columns(w)
    if not rest_ok or not _is_int(shape[0]):
        refuse(
            f"a token-tile view takes whole rows, or columns [rows, w] at [row, c] of a 2-D tensor: shape "
            f"[rows, {', '.join(map(str, input.shape[1:]))}] at [row{', 0' * (len(shape) - 1)}], "
            f"got {shape} at {offsets}"
        )
    _check_rows(tr, offsets[0], valid[0] if valid else None, shape[0], "pypto.view", input.shape[0])
    i = _token_param(tr, input, "a token-tile view")
    tr.seen_token.add(i)
    return _token_tile(tr, input, shape, offsets, valid)


def _token_tile(tr: Trace, x: Tensor, shape: list, offsets: list, valid) -> Tensor:
    """A token tile of parameter `x`, made once per body, rows and valid rows: the same
    view made again is the first (a Python for over weight blocks that views and casts the
    tile in each: corpus22's k199), so that the ops on it are the same ops
    (pypto/same_ops.py). Of rank 3 or more, each token's [*dims] grid of its row
    (pypto/perm.py), a view in place: boxes of its one row tile are column runs of one
    tensor (a split-K's K slices)."""
    key = (tr.iteration, repr(offsets[0]), shape[0], repr(valid))
    made = x.__dict__.setdefault("_tile_views", {})
    if key not in made:
        tile = Tensor.traced(list(shape), x.known_dtype, x._val, True)
        tile._body = x._body
        if len(shape) > 2:
            w = math.prod(shape[1:])
            tile = ops._result("reshape", [tile], [shape[0], w], tile.known_dtype,
                               lambda v: views.reshape(v, [None, w], True))  # fmt: skip
        made[key] = tile
    return made[key] if len(shape) == 2 else perm.split(made[key], list(shape))  # type: ignore[return-value]


def _tile_columns(x: Tensor, shape: list, offsets: list, valid) -> bool:
    """Columns [c, c + w) of a token tile of a 2-D tensor: the tile, then its columns."""
    return (
        len(shape) == 2
        and _is_int(shape[1])
        and _is_int(offsets[1])
        and _is_int(x.shape[1])
        and 0 <= offsets[1]
        and 1 <= shape[1]
        and offsets[1] + shape[1] <= x.shape[1]
        and (valid is None or valid[1] == shape[1])
    )
