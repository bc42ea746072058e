"""Pin a configuration on a kernel as the hints the passes honour (`pto.unroll`,
`pto.options`, `pto.runtime` on the function, `pto.cache` on a weight, `pto.vec_tile`
and `pto.cube_tile` on ops), so the result is a kernel `pto-opt` and `pto-run` take.
A dimension set to `auto` loses its hint: the passes choose."""

from __future__ import annotations

from xdsl.dialects import func
from xdsl.dialects.builtin import ArrayAttr, BoolAttr, DenseArrayBase, DictionaryAttr, IntegerAttr, ModuleOp, i1, i64
from xdsl.ir import Attribute, BlockArgument, Operation

from pto.dialects import pto
from pto.dialects.common import CachePolicy, CachePolicyAttr, CubeTileAttr
from pto.dialects.pto import tensor_type
from pto.interp.run import signature
from pto.tuner.kernel import VEC_TILED, arg_name
from pto.tuner.space import AUTO, CUBE_DIMS, SETTING, Config


def pin(module: ModuleOp, c: Config) -> ModuleOp:
    """A copy of `module` with `c`'s hints pinned (replacing the kernel's own)."""
    m = module.clone()
    f = signature(m).func
    if "unroll" in c:
        _set(f, "pto.unroll", c["unroll"], lambda v: DenseArrayBase.from_list(i64, v))
    _pin_settings(f, c)
    if "stitch" in c:
        _set(f, "pto.runtime", c["stitch"], lambda v: DictionaryAttr({"stitch_function_max_num": IntegerAttr(v, i64)}))
    _pin_caches(f, c)
    if "vec_rows" in c:
        for op in (o for o in f.walk() if isinstance(o, VEC_TILED)):
            cols = tensor_type(op.operands[0]).get_shape()[-1]
            _set(op, "pto.vec_tile", c["vec_rows"], lambda v, cols=cols: DenseArrayBase.from_list(i64, [v, cols]))
    mm = next(o for o in f.walk() if isinstance(o, pto.MatmulOp))
    if any(d in c for d in CUBE_DIMS):  # pruning keeps the four all auto or none
        _set(
            mm,
            "pto.cube_tile",
            c["m"],
            lambda _: CubeTileAttr([c["m"]] * 2, c["k"], [c["n"]] * 2, split_k=c["split_k"]),
        )
    if "host_transpose" in c and isinstance(mm.rhs, BlockArgument):
        _set_arg_hint(f, mm.rhs, "pto.host_transpose", _auto_or(c["host_transpose"], lambda v: BoolAttr(v, i1)))
    return m


def _auto_or(v, make) -> Attribute | None:
    return None if v == AUTO else make(v)


def _set(op: Operation, name: str, v, make) -> None:
    """Pin `make(v)` as `name`, or drop the hint for `auto`."""
    if v == AUTO:
        op.attributes.pop(name, None)
    else:
        op.attributes[name] = make(v)


def _set_arg_hint(f: func.FuncOp, a: BlockArgument, name: str, value: Attribute | None) -> None:
    cur = list(f.arg_attrs.data) if f.arg_attrs else [DictionaryAttr({}) for _ in f.body.block.args]
    hints = {k: v for k, v in cur[a.index].data.items() if k != name}
    cur[a.index] = DictionaryAttr(hints if value is None else {**hints, name: value})
    f.arg_attrs = ArrayAttr(cur)


def _pin_settings(f: func.FuncOp, c: Config) -> None:
    if not any(d in c for d in SETTING):
        return
    old = f.attributes.get("pto.options")
    opts = dict(old.data) if isinstance(old, DictionaryAttr) else {}
    for d, option in SETTING.items():
        if c.get(d) == AUTO:
            opts.pop(option, None)
        elif d in c:  # every group (-1) gets the count: PyPTO's meaning, docs/passes.md
            opts[option] = DictionaryAttr({"-1": IntegerAttr(c[d], i64)})
    f.attributes["pto.options"] = DictionaryAttr(opts)


def _pin_caches(f: func.FuncOp, c: Config) -> None:
    for a in f.body.block.args:
        policy = c.get(f"cache.{arg_name(f, a)}")
        if policy is not None:
            _set_arg_hint(f, a, "pto.cache", _auto_or(policy, lambda v: CachePolicyAttr(CachePolicy(v))))
