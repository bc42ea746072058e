"""`tile-annotate-cache`: L2 policy of the weights, and PyPTO's task-merge pass options."""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import DictionaryAttr, IntegerAttr, ModuleOp, TensorType, i64
from xdsl.ir import Operation
from xdsl.passes import ModulePass

from pto.diagnostics import DiagnosticError
from pto.dialects import tile
from pto.dialects.common import (
    ELEM_BYTES,
    CachePolicy,
    CachePolicyAttr,
    Form,
    FormAttr,
    elem_name,
)
from pto.dialects.pto import SETTINGS
from pto.targets import target_of


def parse_setting(name: str, text: str) -> dict[int, int]:
    """`"-1:2,1:1"` -> {-1: 2, 1: 1}."""
    out: dict[int, int] = {}
    for item in filter(None, (p.strip() for p in text.split(","))):
        key, sep, val = item.partition(":")
        try:
            k, v = int(key), int(val)
        except ValueError:
            raise ValueError(f"{name}: '{item}' is not 'group:count'") from None
        if not sep or v < 1:
            raise ValueError(f"{name}: '{item}' needs a positive count")
        out[k] = v
    return out


def _pinned(f: func.FuncOp, name: str) -> dict[int, int] | None:
    opts = f.attributes.get("pto.options")
    if isinstance(opts, DictionaryAttr) and isinstance(d := opts.data.get(name), DictionaryAttr):
        return {int(k): v.value.data for k, v in d.data.items() if isinstance(v, IntegerAttr)}
    return None


def _pick(setting: dict[int, int], key: int) -> int:
    return setting.get(key, setting.get(-1, 1))


@dataclass(frozen=True)
class TileAnnotateCachePass(ModulePass):
    """Choose each weight's L2 policy and apply the n-buffering pass options.

    Cache: a static tensor loaded whole and fed to the matmul gets `none_cacheable`
    (it is streamed once per token tile and need not occupy L2 and evict activations),
    except a weight reused across the unrolled, stitched iterations of the mhc_pre
    variant that fits in L2, which stays `normal`. A policy already on the load (a
    pinned `pto.cache`) is kept.

    Options (a `pto.options` entry on the kernel wins, per option), each `group:count`
    with PyPTO's meaning: a group of structurally identical subgraphs (here: the stage
    index in flow order among stages of its kind; -1 = every group not listed) and how
    many of them to merge into one task. `vec_nbuffer_setting` merges vector tiles of a
    stage (each merged tile in its own UB copy, so their DMA and compute overlap),
    `cube_nbuffer_setting` cube tasks of a body, `cube_l1_reuse_setting` cube tasks that
    load the same weight tile. Stage settings already present are kept.
    """

    name = "tile-annotate-cache"

    # One option per name in the dialect's SETTINGS (the names `pto.options` may carry).
    cube_l1_reuse_setting: str = "-1:2,1:1"
    vec_nbuffer_setting: str = "0:2"
    cube_nbuffer_setting: str = "-1:1"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        try:
            given = {n: parse_setting(n, getattr(self, n)) for n in SETTINGS}
        except ValueError as e:
            raise DiagnosticError(op, f"tile-annotate-cache: {e}") from None
        for f in op.walk():
            if isinstance(f, func.FuncOp):
                settings = {n: _pinned(f, n) or given[n] for n in SETTINGS}
                for loop in (o for o in f.walk() if isinstance(o, tile.TokenLoopOp)):
                    self.annotate(f, loop, settings)

    def annotate(self, f: func.FuncOp, loop: tile.TokenLoopOp, settings: dict[str, dict[int, int]]) -> None:
        form = f.attributes.get("pto.form")
        mhc = isinstance(form, FormAttr) and form.data == Form.MHC_PRE
        l2 = target_of(f).l2.size
        vec_i = cube_i = 0
        for st in loop.body.block.ops:
            if isinstance(st, tile.VecStageOp):
                if st.nbuffer is None:
                    st.nbuffer = IntegerAttr(_pick(settings["vec_nbuffer_setting"], vec_i), i64)
                vec_i += 1
            elif isinstance(st, tile.CubeStageOp):
                if st.nbuffer is None:
                    st.nbuffer = IntegerAttr(_pick(settings["cube_nbuffer_setting"], cube_i), i64)
                if st.l1_reuse is None:
                    st.l1_reuse = IntegerAttr(_pick(settings["cube_l1_reuse_setting"], cube_i), i64)
                cube_i += 1
                mm = st.matmul
                for operand in (mm.lhs, mm.rhs):
                    load = operand.owner
                    if isinstance(load, tile.ViewOp):  # rows of a weight: the policy is its load's
                        load = load.input.owner
                    if isinstance(load, tile.LoadOp) and load.row is None and load.cache is None:
                        load.cache = CachePolicyAttr(self.policy(load, mhc, l2))

    @staticmethod
    def policy(load: Operation, mhc: bool, l2_bytes: int) -> CachePolicy:
        t = load.results[0].type
        assert isinstance(t, TensorType)
        nbytes = ELEM_BYTES[elem_name(t.element_type)]
        for d in t.get_shape():
            nbytes *= d
        if mhc and nbytes <= l2_bytes:
            return CachePolicy.NORMAL
        return CachePolicy.NONE_CACHEABLE
