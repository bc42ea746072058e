"""`tile-apply-settings`: PyPTO's task-merge pass options recorded on the stages."""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import DictionaryAttr, IntegerAttr, ModuleOp, i64
from xdsl.passes import ModulePass

from pto.dialects import tile
from pto.dialects.pto import SETTINGS


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


def pick_setting(setting: dict[int, int], key: int) -> int:
    """The count for group `key`: its own, else the `-1` entry's, else 1 (no merging)."""
    return setting.get(key, setting.get(-1, 1))


@dataclass(frozen=True)
class TileApplySettingsPass(ModulePass):
    """Record PyPTO's task-merge options on the stages (`nbuffer`, `l1_reuse`).

    Each option is `group:count` with PyPTO's meaning: a group of structurally identical
    subgraphs (here: the stage index in flow order among stages of its kind; -1 = every
    group not listed) and how many of them to merge into one task. `vec_nbuffer_setting`
    merges vector tiles of a stage (each merged tile in its own UB copy, so their DMA and
    compute overlap), `cube_nbuffer_setting` cube tasks of a body, `cube_l1_reuse_setting`
    cube tasks that load the same weight tile. A `pto.options` entry on the kernel wins,
    per option; stage settings already present are kept.
    """

    name = "tile-apply-settings"

    # One option per name in the dialect's SETTINGS (the names `pto.options` may carry);
    # the defaults are SK03.md's out-of-the-box settings.
    cube_l1_reuse_setting: str = "-1:2,1:1"
    vec_nbuffer_setting: str = "0:2"
    cube_nbuffer_setting: str = "-1:1"

    def __post_init__(self) -> None:
        try:  # (checked here: a bad option is a bad command line)
            for n in SETTINGS:
                parse_setting(n, getattr(self, n))
        except ValueError as e:
            raise ValueError(f"{self.name}: {e}") from None

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        given = {n: parse_setting(n, getattr(self, n)) for n in SETTINGS}
        for f in op.walk():
            if isinstance(f, func.FuncOp):
                settings = {n: _pinned(f, n) or given[n] for n in SETTINGS}
                for loop in (o for o in f.walk() if isinstance(o, tile.TokenLoopOp)):
                    self.annotate(loop, settings)

    @staticmethod
    def annotate(loop: tile.TokenLoopOp, settings: dict[str, dict[int, int]]) -> None:
        vec_i = cube_i = 0
        for st in loop.body.block.ops:
            if isinstance(st, tile.VecStageOp):
                if st.nbuffer is None:
                    st.nbuffer = IntegerAttr(pick_setting(settings["vec_nbuffer_setting"], vec_i), i64)
                vec_i += 1
            elif isinstance(st, tile.CubeStageOp):
                if st.nbuffer is None:
                    st.nbuffer = IntegerAttr(pick_setting(settings["cube_nbuffer_setting"], cube_i), i64)
                if st.l1_reuse is None:
                    st.l1_reuse = IntegerAttr(pick_setting(settings["cube_l1_reuse_setting"], cube_i), i64)
                cube_i += 1
