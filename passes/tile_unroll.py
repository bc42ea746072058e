"""`tile-unroll`: PyPTO's `loop_unroll` with a correct remainder for any factor list."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects import arith, func
from xdsl.dialects.builtin import (
    DenseArrayBase,
    DictionaryAttr,
    IndexType,
    IntegerAttr,
    ModuleOp,
    TensorType,
    UnitAttr,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from pto.diagnostics import DiagnosticError, warn
from pto.dialects import tile
from pto.dialects.common import CubeTileAttr, Form, FormAttr

SEED_CANDIDATES = (128, 64, 32, 16, 8, 1)
MHC_PRE_FACTORS = (16,)


def normalise(factors: Sequence[int]) -> list[int]:
    """Unique, descending, with 1 appended if absent (1 guarantees every token is covered)."""
    out = sorted(set(factors), reverse=True)
    if out[-1] != 1:
        out.append(1)
    return out


def schedule(start: int, stop: int, factors: Sequence[int], tail: bool = False) -> list[tuple[int, int, int]]:
    """Static cascade: (begin, end, factor) per non-empty loop. Each factor takes as many
    whole tiles as fit from where the previous one stopped; with `tail` the last one
    takes the rest too, its last tile partial."""
    out = []
    for i, f in enumerate(factors):
        last = tail and i == len(factors) - 1
        end = stop if last else start + (stop - start) // f * f
        if end > start:
            out.append((start, end, f))
        start = end
    return out


def _pick_tiles(body: Block, factor: int) -> None:
    """A stage's tile shapes pinned for this factor (`pto.by_unroll`) replace its own."""
    for st in body.ops:
        per = st.attributes.pop("pto.by_unroll", None)
        mine = per.data.get(str(factor)) if isinstance(per, DictionaryAttr) else None
        hints = mine.data if isinstance(mine, DictionaryAttr) else {}
        if isinstance(st, tile.CubeStageOp) and isinstance(ct := hints.get("pto.cube_tile"), CubeTileAttr):
            st.properties["tiles"] = ct
        elif isinstance(st, tile.VecStageOp) and isinstance(vt := hints.get("pto.vec_tile"), DenseArrayBase):
            st.properties["vec_tile"] = vt


def _tail(f: func.FuncOp) -> bool:
    return isinstance(f.attributes.get("pto.tail"), UnitAttr)


def _const(v: SSAValue) -> int | None:
    op = v.owner
    if isinstance(op, arith.ConstantOp) and isinstance(op.value, IntegerAttr):
        return op.value.value.data
    return None


def _retype(t: Attribute, old: int, new: int) -> Attribute:
    if isinstance(t, TensorType) and t.get_shape() and t.get_shape()[0] == old:
        return TensorType(t.element_type, [new, *t.get_shape()[1:]])
    return t


def specialise(
    src: Block, dst: Block, vmap: dict[SSAValue, SSAValue], tainted: set[SSAValue], old: int, new: int
) -> None:
    """Clone `src` into `dst`, giving every token-dependent tile `new` rows instead of
    `old`. A value is token-dependent if it comes from a row load or from an op that
    reads a token-dependent value (stage results: if what they yield is)."""
    for op in src.ops:
        regions = []
        for r in op.regions:
            nb = Block()
            specialise(r.block, nb, vmap, tainted, old, new)
            regions.append(Region(nb))
        if isinstance(op, tile.StageBase):
            hot = [v in tainted for v in op.body.block.last_op.operands]  # type: ignore[union-attr]
        else:
            row_load = isinstance(op, tile.LoadOp) and op.row is not None
            hot = [row_load or any(v in tainted for v in op.operands)] * len(op.results)
        new_op = op.__class__.create(
            operands=[vmap.get(v, v) for v in op.operands],
            result_types=[_retype(r.type, old, new) if h else r.type for r, h in zip(op.results, hot, strict=True)],
            properties=dict(op.properties),
            attributes=dict(op.attributes),
            regions=regions,
        )
        new_op.location = op.location
        dst.add_op(new_op)
        for r, nr, h in zip(op.results, new_op.results, hot, strict=True):
            nr.name_hint = r.name_hint
            vmap[r] = nr
            if h:
                tainted.add(r)


def check_factors(factors: Sequence[int]) -> None:
    """A `factors` option given is positive, whether or not a kernel pins its own (a
    bad option is a bad command line, not one the kernel happens to ignore)."""
    if any(f < 1 for f in factors):
        raise ValueError(f"unroll factors must be positive, got {list(factors)}")


@dataclass(frozen=True)
class TileUnrollPass(ModulePass):
    """Turn each one-row token loop into a cascade of loops, one per unroll factor.

    Factors: the kernel's pinned `pto.unroll` (a different `factors` option is a
    warning), else the `factors` option, else the form's default (mhc_pre: [16];
    otherwise the seed's candidates 128,64,32,16,8,1).
    They are made unique, sorted descending, and 1 is appended. Factor f covers as many
    whole f-row tiles as fit from where the previous factor stopped, so any list is
    correct (PyPTO 0.2.0 computes each tail from the original start and overruns for
    lists like [4,3,1]). With the kernel's `pto.tail` no 1 is appended: the last
    factor's loop also takes the remainder as one partial tile (`tail`), as PyPTO's
    `pypto.loop` over views with a `valid_shape`. A stage's `pto.by_unroll` tile
    shapes for a factor become that loop's stage tile shapes. With a constant token count the cascade is computed here:
    factors that do not fit are dropped and empty loops not emitted; otherwise the
    bounds are computed at run time. Each loop's body is specialised to static f-row
    tiles.
    """

    name = "tile-unroll"

    factors: tuple[int, ...] = field(default=())

    def __post_init__(self) -> None:
        check_factors(self.factors)

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for f in list(op.walk()):
            if isinstance(f, func.FuncOp):
                for loop in [o for o in f.walk() if isinstance(o, tile.TokenLoopOp) and o.rows == 1]:
                    self.unroll(f, loop, self.factors_for(f, loop))

    def factors_for(self, f: func.FuncOp, loop: Operation) -> list[int]:
        pinned = f.attributes.get("pto.unroll")
        if isinstance(pinned, DenseArrayBase):
            chosen: Sequence[int] = pinned.get_values()
            if self.factors and tuple(self.factors) != tuple(chosen):
                given = list(self.factors)
                warn(f, f"pto.unroll {list(chosen)} pins the unroll factors: the factors option {given} is not used")
        elif self.factors:
            chosen = self.factors
        else:
            form = f.attributes.get("pto.form")
            chosen = MHC_PRE_FACTORS if isinstance(form, FormAttr) and form.data == Form.MHC_PRE else SEED_CANDIDATES
        if not chosen or min(chosen) < 1:
            raise DiagnosticError(loop, f"unroll factors must be positive, got {list(chosen)}")
        return sorted(set(chosen), reverse=True) if _tail(f) else normalise(chosen)

    def unroll(self, f: func.FuncOp, loop: tile.TokenLoopOp, factors: list[int]) -> None:
        rewriter = Rewriter()
        ip = InsertPoint.before(loop)
        idx = IndexType()

        def place(o: Operation) -> None:
            o.location = loop.location
            rewriter.insert_op(o, ip)

        def emit(o: Operation) -> SSAValue:
            place(o)
            return o.results[0]

        tail = _tail(f)
        lo, hi = _const(loop.lower), _const(loop.upper)
        if lo is not None and hi is not None:
            bounds = [
                (
                    emit(arith.ConstantOp.from_int_and_width(b, idx)),
                    emit(arith.ConstantOp.from_int_and_width(e, idx)),
                    k,
                )
                for b, e, k in schedule(lo, hi, factors, tail)
            ]
        else:
            bounds = []
            start = loop.lower
            for k in factors:
                if k == 1 or (tail and k == factors[-1]):
                    end = loop.upper
                else:
                    c = emit(arith.ConstantOp.from_int_and_width(k, idx))
                    left = emit(arith.SubiOp(loop.upper, start))
                    whole = emit(arith.MuliOp(emit(arith.DivUIOp(left, c)), c))
                    end = emit(arith.AddiOp(start, whole))
                    end.name_hint = f"end{k}"
                bounds.append((start, end, k))
                start = end
        for begin, end, k in bounds:
            body = Block(arg_types=[idx])
            body.args[0].name_hint = loop.index.name_hint
            specialise(loop.body.block, body, {loop.index: body.args[0]}, set(), 1, k)
            _pick_tiles(body, k)
            new = tile.TokenLoopOp(begin, end, k, Region(body), tail and k > 1 and k == bounds[-1][2])
            new.attributes.update(loop.attributes)
            place(new)
        rewriter.erase_op(loop)
