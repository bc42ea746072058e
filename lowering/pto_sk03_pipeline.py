"""`pto-sk03-pipeline`: the whole SK-03 lowering, pto -> tile -> npu, as one pass."""

from __future__ import annotations

from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from pto.lowering.pto_to_tile import PtoToTilePass
from pto.lowering.tile_to_npu import TileToNpuPass
from pto.passes.pto_classify_skeleton import PtoClassifySkeletonPass
from pto.passes.pto_fuse_stages import PtoFuseStagesPass
from pto.passes.pto_join_n_windows import PtoJoinNWindowsPass
from pto.passes.tile_annotate_cache import TileAnnotateCachePass
from pto.passes.tile_apply_settings import TileApplySettingsPass
from pto.passes.tile_assign_shapes import TileAssignShapesPass
from pto.passes.tile_unroll import TileUnrollPass, check_factors
from pto.targets import load_target


@dataclass(frozen=True)
class PtoSk03PipelinePass(ModulePass):
    """Lower SK-03 kernels from pto to npu: join, fuse, classify, stage, unroll, cache, settings, shapes, npu.

    Runs pto-join-n-windows (matmuls written per N window are the one matmul),
    pto-fuse-stages (so that the rest sees RMSNorm, quant and dequant written from
    primitives as the fused ops), pto-classify-skeleton, pto-to-tile, tile-unroll{factors},
    tile-annotate-cache, tile-apply-settings, tile-assign-shapes{target} and tile-to-npu; its options go to
    those passes. The result is verified by the driver (half the pipeline's time went to
    verifying after every sub-pass; run the passes one by one to see which one produced
    invalid IR).
    """

    name = "pto-sk03-pipeline"

    target: str = ""
    factors: tuple[int, ...] = field(default=())

    def __post_init__(self) -> None:
        check_factors(self.factors)  # (the sub-passes are made when the pass runs)
        if self.target:
            load_target(self.target)  # an unknown name is a bad command line

    def passes(self) -> list[ModulePass]:
        return [
            PtoJoinNWindowsPass(),
            PtoFuseStagesPass(),
            PtoClassifySkeletonPass(),
            PtoToTilePass(),
            TileUnrollPass(factors=self.factors),
            TileAnnotateCachePass(),
            TileApplySettingsPass(),
            TileAssignShapesPass(target=self.target),
            TileToNpuPass(),
        ]

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for p in self.passes():
            p.apply(ctx, op)
