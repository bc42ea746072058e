"""What the tools know: the dialects they parse and the passes they can run.

The one place that wires the layers together; dialects, passes and lowerings never
import it.
"""

from __future__ import annotations

from collections.abc import Callable

from xdsl.context import Context
from xdsl.ir import Dialect
from xdsl.passes import ModulePass
from xdsl.universe import Universe


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


def _canonicalize() -> type[ModulePass]:
    from xdsl.transforms.canonicalize import CanonicalizePass

    return CanonicalizePass


def _cse() -> type[ModulePass]:
    from xdsl.transforms.common_subexpression_elimination import CommonSubexpressionElimination

    return CommonSubexpressionElimination


def _dce() -> type[ModulePass]:
    from xdsl.transforms.dead_code_elimination import DeadCodeElimination

    return DeadCodeElimination


def _pto_classify_skeleton() -> type[ModulePass]:
    from pto.passes.pto_classify_skeleton import PtoClassifySkeletonPass

    return PtoClassifySkeletonPass


def _pto_to_tile() -> type[ModulePass]:
    from pto.lowering.pto_to_tile import PtoToTilePass

    return PtoToTilePass


def _tile_unroll() -> type[ModulePass]:
    from pto.passes.tile_unroll import TileUnrollPass

    return TileUnrollPass


def _tile_annotate_cache() -> type[ModulePass]:
    from pto.passes.tile_annotate_cache import TileAnnotateCachePass

    return TileAnnotateCachePass


def _tile_assign_shapes() -> type[ModulePass]:
    from pto.passes.tile_assign_shapes import TileAssignShapesPass

    return TileAssignShapesPass


def _test_pass_failure() -> type[ModulePass]:
    from pto.passes.test_pass_failure import TestPassFailurePass

    return TestPassFailurePass


def _test_pass_crash() -> type[ModulePass]:
    from pto.passes.test_pass_crash import TestPassCrashPass

    return TestPassCrashPass


def all_passes() -> dict[str, Callable[[], type[ModulePass]]]:
    """CLI name -> factory; factories import lazily to keep start-up fast."""
    return {
        "canonicalize": _canonicalize,
        "cse": _cse,
        "dce": _dce,
        "pto-classify-skeleton": _pto_classify_skeleton,
        "pto-to-tile": _pto_to_tile,
        "tile-unroll": _tile_unroll,
        "tile-annotate-cache": _tile_annotate_cache,
        "tile-assign-shapes": _tile_assign_shapes,
        "test-pass-failure": _test_pass_failure,
        "test-pass-crash": _test_pass_crash,
    }


# xDSL's own passes whose docstrings do not start with a summary line.
_SUMMARIES = {
    "cse": "Eliminate common subexpressions.",
    "dce": "Remove dead operations and unreachable blocks.",
}


def pass_summary(cls: type[ModulePass]) -> str:
    if cls.name in _SUMMARIES:
        return _SUMMARIES[cls.name]
    doc = (cls.__doc__ or "").strip().splitlines()
    return doc[0] if doc else ""


def _dialect(name: str) -> Callable[[], Dialect]:
    def get() -> Dialect:
        import importlib

        return getattr(importlib.import_module(f"pto.dialects.{name}"), name.upper())

    return get


# Makes stock `xdsl-opt` see our dialects and our own passes (entry point in pyproject).
UNIVERSE = Universe(
    all_dialects={name: _dialect(name) for name in ("pto", "tile", "npu")},
    all_passes={k: v for k, v in all_passes().items() if k not in ("canonicalize", "cse", "dce")},
)
