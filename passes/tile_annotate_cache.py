"""`tile-annotate-cache`: the L2 policy of the weights."""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.ir import Operation
from xdsl.passes import ModulePass

from pto.dialects import tile
from pto.dialects.common import (
    ELEM_BYTES,
    CachePolicy,
    CachePolicyAttr,
    Form,
    FormAttr,
    elem_name,
)
from pto.targets import target_of


@dataclass(frozen=True)
class TileAnnotateCachePass(ModulePass):
    """Choose each weight's L2 policy.

    A static tensor loaded whole and fed to the matmul gets `none_cacheable` (it is
    streamed once per token tile and need not occupy L2 and evict activations), except a
    weight reused across the unrolled, stitched iterations of the mhc_pre variant that
    fits in L2, which stays `normal`. A policy already on the load (a pinned `pto.cache`)
    is kept.
    """

    name = "tile-annotate-cache"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for f in op.walk():
            if isinstance(f, func.FuncOp):
                for loop in (o for o in f.walk() if isinstance(o, tile.TokenLoopOp)):
                    self.annotate(f, loop)

    def annotate(self, f: func.FuncOp, loop: tile.TokenLoopOp) -> None:
        form = f.attributes.get("pto.form")
        mhc = isinstance(form, FormAttr) and form.data == Form.MHC_PRE
        l2 = target_of(f).l2.size
        for st in loop.body.block.ops:
            if not isinstance(st, tile.CubeStageOp):
                continue
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
        return weight_policy(nbytes, mhc, l2_bytes)


def weight_policy(nbytes: int, mhc: bool, l2_bytes: int) -> CachePolicy:
    """The policy of a weight of `nbytes` (pto-tune's estimate asks it too)."""
    return CachePolicy.NORMAL if mhc and nbytes <= l2_bytes else CachePolicy.NONE_CACHEABLE
