"""Analytic pruning: drop the configurations the passes would reject (capacity,
alignment, unsupported combinations) and those that lower to the same kernel as one
already kept, before anything runs; count each reason.

The capacity rules are tile-assign-shapes' (docs/passes.md), with the target's figures;
the vector phases are planned with its own functions (`tuner/phases.py`, `planning/`);
what this misses is caught when the configuration is compiled, and recorded."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from pto.dialects.common import ELEM_BYTES
from pto.passes.tile_unroll import SEED_CANDIDATES, normalise, schedule
from pto.planning.cube import body_m, group_size, pad
from pto.planning.vector import max_copies
from pto.tuner.kernel import KernelInfo
from pto.tuner.space import AUTO, CUBE_DIMS, Config, given, key


def used_factors(unroll: list[int] | str, tokens: Iterable[int]) -> list[int]:
    """The factors whose loops run at some token count: at t = 16 the lists 128/16/1 and
    16/1 both run one 16-token body, and time the same."""
    factors = normalise(SEED_CANDIDATES if isinstance(unroll, str) else unroll)  # a str is AUTO
    return sorted({f for t in tokens for _, _, f in schedule(0, t, factors)}, reverse=True)


def _row_groups(c: Config, bodies: list[int], fractal: int) -> tuple:
    """Per body, the rows of one M tile and how many row tiles share a unit (l1_reuse)."""
    out = []
    for p in bodies:
        m = body_m(c["m"], p, fractal) if given(c, "m") else None
        tiles = -(-p // m) if m else None
        reuse = 1 if given(c, "split_k") else given(c, "l1_reuse")  # split-K units are one row tile
        if reuse is not None and tiles is not None:
            reuse = group_size(tiles, reuse)
        out.append((m, reuse))
    return tuple(out)


def _plans(c: Config, info: KernelInfo, tokens: list[int]) -> list:
    """The vector phase plans (rows, copies, chunk) of each body, by tile-assign-shapes'
    rules; [] where tuner/phases.py cannot tell them (then the configurations are compared
    by their raw values). The plan cuts rows, copies or columns until a task fits, so no
    configuration is pruned for UB."""
    if info.phases is None:
        return []
    plans = [info.phases.for_config(c, p) for p in used_factors(c.get("unroll", AUTO), tokens)]
    return [] if any(p is None for p in plans) else plans


def effective(c: Config, info: KernelInfo, tokens: list[int]) -> str:
    """What the configuration lowers to at these token counts: equal for equivalent ones
    (the vector tile rows and copies as the phase plans make them)."""
    bodies = used_factors(c["unroll"], tokens) if "unroll" in c else []
    plans = _plans(c, info, tokens)
    drop = ("unroll", "m", "l1_reuse") + (("vec_rows", "vec_nbuffer") if plans else ())
    rest = {k: v for k, v in c.items() if k not in drop}
    rows = list(_row_groups(c, bodies, info.target.cube.fractal))
    return key({**rest, "bodies": bodies, "rows": rows, "phases": plans})


def illegal(c: Config, info: KernelInfo, tokens: list[int]) -> str | None:
    """Why the passes would reject `c` (a short reason, counted), or None."""
    cube = [c[d] == AUTO for d in CUBE_DIMS if d in c]
    if any(cube) and not all(cube):
        return "cube tile partly auto (the passes choose it whole)"
    if given(c, "vec_nbuffer") and c["vec_nbuffer"] > max_copies(info.target.sync.event_ids):
        return "vec_nbuffer above the copies the flags tell apart"
    if not given(c, "k"):
        return None
    (k0, k1), n, t = c["k"], c["n"], info.target
    if k1 > info.k:
        return "K tile larger than K"
    if info.k % k1 or info.n % n:
        return "K or N not a multiple of its tile"
    sa, sacc = ELEM_BYTES[info.a_elem], ELEM_BYTES[info.acc_elem]
    bodies = used_factors(c["unroll"], tokens) if "unroll" in c else [max(tokens)]
    fr = t.cube.fractal
    m = pad(body_m(c["m"], max(bodies), fr), fr)
    blk = t.block_bytes
    if (k0 * sa) % blk or (n * sa) % blk:
        return f"K or N tile not {blk}-byte aligned"
    for space, need in (
        ("l0a", m * k0 * sa),
        ("l0b", n * k0 * sa),
        ("l0c", m * n * sacc),
        ("l1", (m + n) * k1 * sa),
    ):
        if need > t.capacity(space):
            return f"{space} capacity"
    return None


def prune(configs: Iterable[Config], info: KernelInfo, tokens: list[int]) -> tuple[list[Config], Counter]:
    """The configurations worth running, and per reason how many were dropped."""
    kept: list[Config] = []
    seen: set[str] = set()
    reasons: Counter[str] = Counter()
    for c in configs:
        if why := illegal(c, info, tokens):
            reasons[why] += 1
        elif (e := effective(c, info, tokens)) in seen:
            reasons["same kernel as another at these token counts"] += 1
        else:
            seen.add(e)
            kept.append(c)
    return kept, reasons
