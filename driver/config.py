"""A kernel's configuration as its passes left it, read from its `tile` level: the
unroll list (the token loops' steps), each stage's tiles and task-merge settings (by
the npu group label it becomes: `linear.128`), each weight's cache policy and the
stitch count. What the report and its page show next to the figures, so that two runs
can be told apart."""

from __future__ import annotations

from xdsl.dialects import func
from xdsl.dialects.builtin import DictionaryAttr, IntegerAttr, ModuleOp
from xdsl.ir import Attribute

from pto.dialects import tile


def configuration(module: ModuleOp) -> dict[str, str]:
    """Name -> value, in the order a reader wants them; {} for a module with no tile ops."""
    out: dict[str, str] = {}
    steps = [op.step.value.data for op in module.walk() if isinstance(op, tile.TokenLoopOp)]
    if steps:
        out["unroll"] = ", ".join(map(str, steps))
    for loop in (op for op in module.walk() if isinstance(op, tile.TokenLoopOp)):
        for op in loop.walk():
            if isinstance(op, tile.VecStageOp | tile.CubeStageOp):
                out[f"{op.label.data}.{loop.step.value.data}"] = _stage(op)
    for op in module.walk():
        if isinstance(op, tile.LoadOp) and op.cache is not None:
            out[f"cache {op.source.name_hint or '?'}"] = op.cache.data.value
        if isinstance(op, func.FuncOp) and isinstance(rt := op.attributes.get("pto.runtime"), DictionaryAttr):
            out.update({k: _show(v) for k, v in rt.data.items()})
    return out


def _stage(op: tile.VecStageOp | tile.CubeStageOp) -> str:
    parts = []
    if isinstance(op, tile.VecStageOp) and op.vec_tile is not None:
        parts.append(f"vector tile {list(op.vec_tile.get_values())}")
    if isinstance(op, tile.CubeStageOp) and op.tiles is not None:
        parts.append(f"cube tiles {_show(op.tiles)}")
    if isinstance(op, tile.CubeStageOp) and op.l1_reuse is not None:
        parts.append(f"l1_reuse {op.l1_reuse.value.data}")
    if op.nbuffer is not None:
        parts.append(f"nbuffer {op.nbuffer.value.data}")
    return ", ".join(parts) or "passes' defaults"


def _show(a: Attribute) -> str:
    if isinstance(a, IntegerAttr):
        return str(a.value.data)
    text = str(a)
    return text[text.find("<") :] if "<" in text else text
