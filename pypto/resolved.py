"""What a tuned jit kernel's hints came to when the passes lowered it (the tile level):
`kernel.tune(...).resolved`, per token loop, the values the passes chose where the
winner leaves a hint unset; and the readers of hint attributes that the suggestions
(`pto.pypto.tuning`) share."""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.dialects import func
from xdsl.dialects.builtin import DenseArrayBase, DictionaryAttr, IntegerAttr, ModuleOp
from xdsl.ir import Attribute, Operation

from pto.dialects import pto, tile
from pto.dialects.common import CachePolicy, CubeTileAttr
from pto.interp.run import signature
from pto.tuner.kernel import arg_name
from pto.tuner.space import SETTING


@dataclass(frozen=True)
class Resolved:
    what: str  # "token loops", "'rmsnorm' vector tile", "w", ...
    value: str  # in PyPTO's spelling where it has one
    rows: tuple[int, ...]  # the token loops (their unroll factors) it holds in; () for all
    chosen: bool  # the passes chose it: the winner leaves the hint unset

    def __str__(self) -> str:
        at = f" (p = {', '.join(map(str, self.rows))})" if self.rows else ""
        return f"  {self.what}{at}: {self.value}{' *' if self.chosen else ''}"


def ints(a: Attribute) -> list[int]:
    assert isinstance(a, DenseArrayBase)
    return [int(v) for v in a.get_values()]


def attr_dict(a: Attribute | None) -> dict[str, Attribute]:
    return dict(a.data) if isinstance(a, DictionaryAttr) else {}


def arg_hint(f: func.FuncOp, i: int, name: str) -> Attribute | None:
    return attr_dict(f.arg_attrs.data[i]).get(name) if f.arg_attrs is not None else None


def cube_values(t: CubeTileAttr) -> list:
    """set_cube_tile_shapes' arguments: m, k, n and enable_split_k."""
    return [list(t.axes[a]) for a in "mkn"] + [t.is_split_k]


def cube_args(t: CubeTileAttr) -> str:
    m, k, n, split = cube_values(t)
    return f"{m}, {k}, {n}" + (", enable_split_k=True" if split else "")


def resolved_hints(m: ModuleOp, won: func.FuncOp, weights: tuple[str, ...], alias: str) -> list[Resolved]:
    """Per token loop of the tile level, what its stages and weights run with, the loops
    that run alike merged; `chosen` where the winner's kernel leaves the hint unset."""
    f = signature(m).func
    loops = [op for op in f.walk() if isinstance(op, tile.TokenLoopOp)]
    steps = [lp.step.value.data for lp in loops]
    every = tuple(dict.fromkeys(steps))
    tail = "pto.tail" in won.attributes and len(every) == 1  # pypto.loop: one tile, the last partial
    unroll = f"a pypto.loop of {every[0]}-row tiles" if tail else f"unroll_list={list(every)}"
    rows: dict[tuple[str, str, bool], tuple[int, ...]] = {}
    for lp, step in zip(loops, steps, strict=True):
        for entry in (e for op in lp.walk() for e in _stage(op, won, weights, alias)):
            rows[entry] = tuple(dict.fromkeys([*rows.get(entry, ()), step]))
    pinned = any("pto.vec_tile" in o.attributes for o in won.walk())
    for st in (op for op in f.body.block.ops if tile.is_weight_stage(op)):  # (once, before the loops)
        shape = ", ".join(map(str, ints(st.vec_tile)))
        rows[(f"'{st.label.data}' weight-stage tile", f"{alias}.set_vec_tile_shapes({shape})", not pinned)] = every
    return [Resolved("token loops", unroll, (), "pto.unroll" not in won.attributes)] + [
        Resolved(what, value, () if r == every else r, chosen) for (what, value, chosen), r in rows.items()
    ]


def _stage(op: Operation, won: func.FuncOp, weights: tuple[str, ...], alias: str) -> list[tuple[str, str, bool]]:
    """(what, value, chosen by the passes) of a stage or a weight's load."""
    options = attr_dict(won.attributes.get("pto.options"))
    unset = lambda key: key not in options  # noqa: E731
    if isinstance(op, tile.VecStageOp) and op.vec_tile is not None:
        pinned = any("pto.vec_tile" in o.attributes for o in won.walk())
        return [
            (
                f"'{op.label.data}' vector tile",
                f"{alias}.set_vec_tile_shapes({', '.join(map(str, ints(op.vec_tile)))})",
                not pinned,
            ),
            (f"'{op.label.data}' vec_nbuffer", str(_count(op.nbuffer)), unset(SETTING["vec_nbuffer"])),
        ]
    if isinstance(op, tile.CubeStageOp) and op.tiles is not None:
        pinned = any(
            "pto.cube_tile" in o.attributes or "pto.by_unroll" in o.attributes
            for o in won.walk()
            if isinstance(o, pto.MatmulOp)
        )
        return [
            (f"'{op.label.data}' cube tile", f"{alias}.set_cube_tile_shapes({cube_args(op.tiles)})", not pinned),
            (f"'{op.label.data}' l1_reuse", str(_count(op.l1_reuse)), unset(SETTING["l1_reuse"])),
            (f"'{op.label.data}' cube_nbuffer", str(_count(op.nbuffer)), unset(SETTING["cube_nbuffer"])),
        ]
    if isinstance(op, tile.LoadOp) and op.row is None and (name := arg_name(won, op.source)) in weights:  # type: ignore[arg-type]
        none = op.cache is not None and op.cache.data == CachePolicy.NONE_CACHEABLE
        moved = " (passed transposed, [K, N])" if op.host_transpose is not None else ""
        # (the tile level keeps the pto level's arguments, in order, before its outputs)
        hinted = arg_hint(won, op.source.index, "pto.cache") is not None  # type: ignore[attr-defined]
        return [(name, f"{name}.set_cache_policy({alias}.CachePolicy.NONE_CACHEABLE, {none}){moved}", not hinted)]
    return []


def _count(a: IntegerAttr | None) -> int:
    return a.value.data if a is not None else 1  # (unset: one, as tile-to-npu reads it)
