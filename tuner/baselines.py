"""The two configurations every tuning run is compared with (and always measures): the
kernel's own hints (the empty configuration) and SK03.md's out-of-the-box settings."""

from __future__ import annotations

from pto.tuner.kernel import KernelInfo
from pto.tuner.space import Config

# SK03.md, "Out-of-the-box performance settings": the seed's unroll candidates,
# cube_l1_reuse_setting -1: 2, vec_nbuffer_setting 2, NONE_CACHEABLE on weights read once
# per iteration, vector tiles (4, hidden); cube tiles are the kernel's (its reference table).
SK03_STANDARD = {"unroll": [128, 64, 32, 16, 8, 1], "l1_reuse": 2, "vec_nbuffer": 2}
SK03_VEC_ROWS = 4
# The mhc_pre variant as a whole: loop_unroll [16], stitch_function_max_num 128,
# cube_nbuffer {-1: 4}, vec_nbuffer 4, the weight left cacheable (reused, fits in L2).
SK03_MHC = {"unroll": [16, 1], "stitch": 128, "cube_nbuffer": 4, "vec_nbuffer": 4}


def sk03(info: KernelInfo) -> Config:
    if info.form == "mhc_pre":
        return {**SK03_MHC, **{f"cache.{w}": "normal" for w in info.weights}}
    c = {**SK03_STANDARD, **{f"cache.{w}": "none_cacheable" for w in info.weights}}
    return c | ({"vec_rows": SK03_VEC_ROWS} if info.vec_cols else {})


def baselines(info: KernelInfo) -> dict[str, Config]:
    return {"own hints": {}, "SK03.md": sk03(info)}
