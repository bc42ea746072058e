"""The tuning space: its dimensions, the values each takes for a kernel, and how a
configuration (a dict from dimension to value) is pinned on the kernel as hints.

A configuration leaves every dimension it does not name as the kernel has it, so `{}`
is the kernel's own hints. Values are JSON values (lists, not tuples), so that a
configuration reads back from the store as it was written.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator
from dataclasses import dataclass

from pto.tuner.kernel import KernelInfo

Config = dict  # dimension name -> JSON value

# SK03.md's candidate unroll lists (the DeepSeek-V4 kernels' and one factor at a time);
# the mhc_pre variant's own ([16], decode [256, 64, 16, 4, 1]) and two between.
UNROLLS = ([128, 64, 32, 16, 8, 1], [128, 64, 32, 16, 1], [256, 64, 16, 4, 1], [128, 1], [64, 1], [32, 1], [16, 1])
MHC_UNROLLS = ([16, 1], [256, 64, 16, 4, 1], [64, 16, 1], [32, 1])
VEC_ROWS = (1, 2, 4, 8)
M_TILES = (16, 32, 64, 128)
N_TILES = (64, 128, 256)
K_L0 = (128, 256, 512)
K_L1_TIMES = (1, 2, 4)  # kL1 = kL0 x this
MERGES = {"l1_reuse": (1, 2, 4), "vec_nbuffer": (1, 2, 4), "cube_nbuffer": (1, 2)}
CACHES = ("none_cacheable", "normal")
CUBE_DIMS = ("m", "n", "k", "split_k")
AUTO = "auto"  # a value of any dimension: no hint, the passes choose (the cube tile only as a whole)

# The `*_setting` pass option each merge dimension sets, for every group (-1).
SETTING = {
    "l1_reuse": "cube_l1_reuse_setting",
    "vec_nbuffer": "vec_nbuffer_setting",
    "cube_nbuffer": "cube_nbuffer_setting",
}


def _cube_dims(info: KernelInfo) -> dict[str, list]:
    if info.form == "mhc_pre":  # all or nothing (SK03.md): the passes' tiles
        return {}
    split = [False, True] if info.acc_elem == "f32" else [False]  # no split-K with an i32 accumulator
    ks = [[k0, k0 * t] for k0 in K_L0 for t in K_L1_TIMES]
    # A matmul that no candidate tile divides on an axis gets the one tile of its whole size.
    ns = list(N_TILES) if any(info.n % n == 0 for n in N_TILES) else [info.n]
    ks = ks if any(k1 <= info.k and info.k % k1 == 0 for _, k1 in ks) else [[info.k, info.k]]
    return {"m": list(M_TILES), "n": ns, "k": ks, "split_k": split}


def dimensions(info: KernelInfo) -> dict[str, list]:
    """Every dimension of `info`'s kernel with its default candidate values."""
    dims: dict[str, list] = {"unroll": [list(u) for u in (MHC_UNROLLS if info.form == "mhc_pre" else UNROLLS)]}
    if info.vec_cols:
        dims["vec_rows"] = list(VEC_ROWS)
    dims |= _cube_dims(info)
    dims |= {f"cache.{w}": list(CACHES) for w in info.weights}
    if info.host_transposable:  # the variant transposes by default (SK03.md): that first
        dims["host_transpose"] = [True, False] if info.form == "mhc_pre" else [False, True]
    dims |= {name: list(vals) for name, vals in MERGES.items()}
    dims["stitch"] = [None]  # all bodies in one stitch unless asked (`--dim stitch=1,128`)
    return dims


@dataclass
class Space:
    dims: dict[str, list]

    @property
    def size(self) -> int:
        n = 1
        for vals in self.dims.values():
            n *= len(vals)
        return n

    def __iter__(self) -> Iterator[Config]:
        names = list(self.dims)
        for combo in itertools.product(*self.dims.values()):
            yield {k: v for k, v in zip(names, combo, strict=True) if v is not None}

    def along(self, c: Config, d: str) -> list[Config]:
        """The configurations that differ from `c` in dimension `d` only."""
        return [{k: x for k, x in ({**c, d: v}).items() if x is not None} for v in self.dims[d] if v != c.get(d)]


def given(c: Config, d: str, default=None):
    """The value `c` pins for dimension `d`, or `default` where it leaves it to the passes."""
    v = c.get(d, AUTO)
    return default if v == AUTO else v


def key(c: Config) -> str:
    return json.dumps(c, sort_keys=True, separators=(",", ":"))


def describe(c: Config) -> str:
    """A short human form: `unroll=128/1 m=64 k=256/1024 cache.w=normal`."""
    if not c:
        return "(the kernel's own hints)"
    show = lambda v: "/".join(map(str, v)) if isinstance(v, list) else str(v).lower()  # noqa: E731
    return " ".join(f"{k}={show(v)}" for k, v in c.items())
