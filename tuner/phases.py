"""The kernel's vector phases at the tile level, planned for a configuration with the
rules tile-assign-shapes applies (`planning.vector`), before anything is compiled: the
pruning drops what cannot fit and merges configurations whose plans coincide, the
estimate counts the tasks the plan makes."""

from __future__ import annotations

from functools import cache

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import DictionaryAttr, ModuleOp

from pto.diagnostics import DiagnosticError
from pto.dialects import tile
from pto.lowering.pto_sk03_pipeline import PtoSk03PipelinePass
from pto.planning import vector as vp
from pto.targets import Target
from pto.tuner.kernel import VEC_TILED
from pto.tuner.space import AUTO, Config, given

# One body tall enough for every unroll factor the space holds: the phases' stages do
# not depend on it, only how many tiles a body has (passed per factor).
TEMPLATE_ROWS = 256
# What a phase plan is, for comparing configurations: (rows, copies, chunk) per phase.
Plan = tuple[tuple[int, int, int], ...]
# The fused ops a tuner's `vec_rows` pins (VEC_TILED at the tile level).
_PINNED_OPS = (tile.RmsNormOp, tile.QuantOp, tile.DequantOp)


class Phases:
    """The vector phases of the kernel's token loop, with the rows tile-assign-shapes
    gives each stage on its own (the kernel's own vector tiles removed: `auto`)."""

    def __init__(self, module: ModuleOp, target: Target, own_rows: int | None):
        self.target, self.own_rows = target, own_rows
        f = next(o for o in module.walk() if isinstance(o, func.FuncOp))
        options = f.attributes.get("pto.options")
        self.own_copies = isinstance(options, DictionaryAttr) and "vec_nbuffer_setting" in options.data
        m = module.clone()
        # The kernel's own tiles on other ops than the ones the tuner pins, or column
        # chunks: the plan then depends on more than this models (pruning falls back).
        self.exact = not any("pto.vec_tile" in op.attributes for op in m.walk() if not isinstance(op, VEC_TILED))
        for op in m.walk():
            op.attributes.pop("pto.vec_tile", None)
        ctx = Context()
        for p in PtoSk03PipelinePass(target=target.name, factors=(TEMPLATE_ROWS,)).passes()[:-1]:  # to the tile level
            p.apply(ctx, m)
        loop = next(o for o in m.walk() if isinstance(o, tile.TokenLoopOp))
        self.module = m  # (the phases' ops live in it)
        self.phases = vp.phases(loop)
        self.exact = self.exact and all(
            st.phase is not None and st.phase.columns is None for st in (ph[0] for ph in self.phases)
        )
        self.tiled = [any(isinstance(o, _PINNED_OPS) for st in ph for o in st.body.block.ops) for ph in self.phases]
        self.plan = cache(self._plan)

    def rows_of(self, st: tile.VecStageOp, c: Config) -> int:
        auto = int(st.vec_tile.get_values()[0]) if st.vec_tile is not None else TEMPLATE_ROWS
        if not any(isinstance(o, _PINNED_OPS) for o in st.body.block.ops):
            return auto
        r = c.get("vec_rows", self.own_rows)
        return auto if r is None or r == AUTO else r

    def for_config(self, c: Config, p: int) -> Plan | None:
        """The phase plans of a body of p tokens under `c`; None where this cannot tell
        (not `exact`, or a phase that does not fit)."""
        if not self.exact:
            return None
        rows = tuple(min([p, *(self.rows_of(st, c) for st in ph)]) for ph in self.phases)
        copies = given(c, "vec_nbuffer")
        pinned_rows = given(c, "vec_rows") is not None or "vec_rows" not in c and self.own_rows is not None
        pinned_copies = copies is not None or "vec_nbuffer" not in c and self.own_copies
        keep = tuple(bool(pinned_copies) and not (pinned_rows and tiled) for tiled in self.tiled)
        return self.plan(p, rows, copies, keep)

    def _plan(self, p: int, rows: tuple[int, ...], copies: int | None, keep: tuple[bool, ...]) -> Plan | None:
        cap, block = self.target.capacity("ub"), self.target.block_bytes
        out = []
        for ph, r, keep_copies in zip(self.phases, rows, keep, strict=True):
            asked = copies or max((st.nbuffer.value.data for st in ph if st.nbuffer is not None), default=1)
            ch = vp.choose(ph, p, r, asked, None, cap, block, keep_copies=keep_copies)
            if isinstance(ch, vp.Need):
                return None
            out.append((ch.rows, ch.copies, ch.cols.cw if ch.cols else 0))
        return tuple(out)


def phases(module: ModuleOp, target: Target, own_rows: int | None) -> Phases | None:
    """The kernel's phases, or None when its tile level cannot be planned here (the
    configurations are then checked when they compile)."""
    try:
        return Phases(module, target, own_rows)
    except DiagnosticError:
        return None
