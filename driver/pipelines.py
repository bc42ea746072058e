"""Pass pipelines: their spelling, the named ones, and where each level ends.

A pipeline is written as mlir-opt writes it, `builtin.module(a,b{k=v})`, or as xDSL
does, `a,b{k=v}`. A named pipeline (`pto-sk03-pipeline`) is one pass that runs others;
`expand` runs it pass by pass where a caller wants to see each level.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from xdsl.passes import ModulePass, PassPipeline, PassPipelineCallbackType

from pto.driver.errors import InternalError, UsageError
from pto.driver.registry import all_passes

# The pipeline that lowers a kernel from each level to the npu level. From the tile
# level, tile-assign-shapes fills in what the IR does not pin (tiles, phase plans) and
# checks what it does.
TO_NPU = {"pto": "pto-sk03-pipeline", "tile": "tile-assign-shapes,tile-to-npu"}

# The lowering passes, by the level each one leaves.
LOWERINGS = {"pto-to-tile": "pto", "tile-to-npu": "tile"}


def pipeline_spec(text: str) -> str:
    """`builtin.module(a,b{k=v})` -> `a,b{k=v}` (xDSL's spelling); plain lists pass."""
    text = text.strip()
    if text.count("(") != text.count(")") or text.count("{") != text.count("}"):
        raise UsageError(f"pass pipeline '{text}' has unbalanced brackets")
    if text.startswith("builtin.module(") and text.endswith(")"):
        return text[len("builtin.module(") : -1]
    if re.match(r"^[\w.]+\(", text):
        raise UsageError(f"pass pipeline anchor '{text.split('(')[0]}' is not supported; use 'builtin.module(...)'")
    return text


def as_mlir_pipeline(passes: Sequence[ModulePass]) -> str:
    return "builtin.module(" + ",".join(str(p.pipeline_pass_spec()) for p in passes) + ")"


def to_npu(level: str, target: str | None = None) -> str:
    """The default pipeline from `level` to npu, for `target` if given."""
    if level == "pto" and target:
        return f"{TO_NPU['pto']}{{target={target}}}"
    if level == "tile" and target:
        return f"tile-assign-shapes{{target={target}}},tile-to-npu"
    return TO_NPU[level]


def parse_pipeline(spec: str, callback: PassPipelineCallbackType | None = None) -> PassPipeline:
    """A pipeline in xDSL's spelling; an unknown pass or a bad option is a UsageError."""
    passes = {name: _loading(name, factory) for name, factory in all_passes().items()}
    try:
        return PassPipeline.parse_spec(passes, spec, callback)
    except BaseException as e:  # option parsing raises assorted errors, ArgSpecParseError a BaseException
        if isinstance(e, KeyboardInterrupt | SystemExit | InternalError):
            raise
        if m := re.match(r"Unrecognized passes: \[(.*)\]", str(e)):
            raise UsageError(f"unknown pass {m.group(1)} (see pto-opt --list-passes)") from None
        raise UsageError(f"bad pass pipeline '{spec}': {_one_line(e)}") from None


def _loading(name: str, factory: Callable[[], type[ModulePass]]) -> Callable[[], type[ModulePass]]:
    """The factory, with a failure to import the pass's module reported as the bug it is,
    not as a bad pipeline."""

    def load() -> type[ModulePass]:
        try:
            return factory()
        except Exception as e:
            raise InternalError(f"cannot load pass '{name}': {type(e).__name__}: {e}") from e

    return load


def _one_line(e: BaseException) -> str:
    text = str(e).strip()
    if "\n" not in text:
        return text
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    col = re.search(r"pass-pipeline:\d+:(\d+)", text)
    return lines[-1] + (f" (at column {col.group(1)})" if col else "")


def expand(passes: Sequence[ModulePass]) -> list[ModulePass]:
    """Named pipelines replaced by the passes they run, so that each level is seen."""
    out: list[ModulePass] = []
    for p in passes:
        inner = getattr(p, "passes", None)
        out += expand(inner()) if callable(inner) else [p]
    return out
