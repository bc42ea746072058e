"""What the driver knows: the dialects it parses and the passes it can run.

The one place that names every layer; dialects, passes and lowerings never import
it. Passes are imported lazily (only the ones a pipeline names), to keep the
tools' start-up fast.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

from xdsl.context import Context
from xdsl.passes import ModulePass
from xdsl.universe import Universe

# CLI name -> (module, class). Ours first, then the xDSL passes an MLIR user expects.
PASSES: dict[str, tuple[str, str]] = {
    "pto-join-n-windows": ("pto.passes.pto_join_n_windows", "PtoJoinNWindowsPass"),
    "pto-fuse-stages": ("pto.passes.pto_fuse_stages", "PtoFuseStagesPass"),
    "pto-classify-skeleton": ("pto.passes.pto_classify_skeleton", "PtoClassifySkeletonPass"),
    "pto-to-tile": ("pto.lowering.pto_to_tile", "PtoToTilePass"),
    "tile-unroll": ("pto.passes.tile_unroll", "TileUnrollPass"),
    "tile-annotate-cache": ("pto.passes.tile_annotate_cache", "TileAnnotateCachePass"),
    "tile-apply-settings": ("pto.passes.tile_apply_settings", "TileApplySettingsPass"),
    "tile-assign-shapes": ("pto.passes.tile_assign_shapes", "TileAssignShapesPass"),
    "tile-to-npu": ("pto.lowering.tile_to_npu", "TileToNpuPass"),
    "pto-sk03-pipeline": ("pto.lowering.pto_sk03_pipeline", "PtoSk03PipelinePass"),
    "test-pass-failure": ("pto.passes.test_pass_failure", "TestPassFailurePass"),
    "test-pass-crash": ("pto.passes.test_pass_crash", "TestPassCrashPass"),
    "canonicalize": ("xdsl.transforms.canonicalize", "CanonicalizePass"),
    "cse": ("xdsl.transforms.common_subexpression_elimination", "CommonSubexpressionElimination"),
    "dce": ("xdsl.transforms.dead_code_elimination", "DeadCodeElimination"),
}
XDSL_PASSES = ("canonicalize", "cse", "dce")

# xDSL's own passes whose docstrings do not start with a summary line.
_SUMMARIES = {
    "cse": "Eliminate common subexpressions.",
    "dce": "Remove dead operations and unreachable blocks.",
}


def _lazy(module: str, name: str) -> Callable[[], Any]:
    return lambda: getattr(importlib.import_module(module), name)


def load_dialects(ctx: Context) -> None:
    from xdsl.dialects.arith import Arith
    from xdsl.dialects.builtin import Builtin
    from xdsl.dialects.func import Func
    from xdsl.dialects.scf import Scf
    from xdsl.dialects.tensor import Tensor

    from pto.dialects.npu import NPU
    from pto.dialects.pto import PTO
    from pto.dialects.tile import TILE

    for d in (Builtin, Func, Arith, Scf, Tensor, PTO, TILE, NPU):
        ctx.load_dialect(d)


def all_passes() -> dict[str, Callable[[], type[ModulePass]]]:
    """CLI name -> factory of the pass class."""
    return {name: _lazy(*where) for name, where in PASSES.items()}


def pass_summary(cls: type[ModulePass]) -> str:
    if cls.name in _SUMMARIES:
        return _SUMMARIES[cls.name]
    doc = (cls.__doc__ or "").strip().splitlines()
    return doc[0] if doc else ""


# Makes stock `xdsl-opt` see our dialects and our own passes (entry point in pyproject).
UNIVERSE = Universe(
    all_dialects={name: _lazy(f"pto.dialects.{name}", name.upper()) for name in ("pto", "tile", "npu")},
    all_passes={k: v for k, v in all_passes().items() if k not in XDSL_PASSES},
)
