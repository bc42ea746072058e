"""A quick analytic estimate of a configuration's cycles, from the target's figures,
to rank candidates before the machine model runs the promising ones.

It counts what the model charges at the granularity of tasks: per loop body the cube
tasks (K slices streamed through L1, the weight loaded once per unit of row tiles, the
mmads, the fixpipe) and the vector tasks (rows in, the stage's ops, rows out); tasks
spread over the cores with the dispatch latencies; stitches run one after another.

GM reads are charged as the model charges them (docs/model.md): in whole L2 lines per
row of the tile, so a narrow weight tile pays for lines it only partly uses. The weight
is re-read by every unit of row tiles: a cacheable weight that fits in the L2 the model
simulates misses once and then hits, a NONE_CACHEABLE one (or one too big for L2) comes
from HBM every time, whose bandwidth the busy cube cores share. It ignores pipe
overlap beyond double buffering, so it ranks, it does not predict: the guided search
checks its picks with the model.
"""

from __future__ import annotations

from dataclasses import dataclass

from pto.dialects.common import ELEM_BYTES, CubeTileAttr
from pto.interp.cost import CostModel
from pto.lowering.tile_to_npu.cube import MAX_KEPT_SLICES, split_runs
from pto.passes.tile_annotate_cache import weight_policy
from pto.passes.tile_apply_settings import TileApplySettingsPass, parse_setting, pick_setting
from pto.passes.tile_unroll import SEED_CANDIDATES, normalise, schedule
from pto.planning.cube import BUFFERS, body_m, choose, clip_k, fit, mhc_tiles, pad
from pto.planning.vector import VEC_ROWS, max_copies
from pto.targets import Target
from pto.tuner.kernel import KernelInfo
from pto.tuner.space import CUBE_DIMS, SETTING, Config, given

# The pass defaults a configuration that does not name a dimension gets (docs/passes.md).
DEFAULT_UNROLL = list(SEED_CANDIDATES)
# tile-apply-settings' defaults for the first stage of each kind, the one modelled here.
DEFAULT_MERGE = {
    dim: pick_setting(parse_setting(option, getattr(TileApplySettingsPass(), option)), 0)
    for dim, option in SETTING.items()
}
VEC_OPS_PER_ELEM = 6  # a norm's vcast, vmul, vreduce, vdiv, vmul, vcast: the vector work per element
VEC_SPAN_SHARE = 0.5  # of the vector work's spread not hidden behind the cube's (other bodies overlap)


@dataclass
class Task:
    count: int
    cycles: float


@dataclass
class Cube:
    """The cube work of one body of p tokens, as tile-to-npu cuts it."""

    m: int
    n: int
    k1: int
    k0: int
    reuse: int  # row tiles per unit (l1_reuse)
    units: int
    slices: int  # K slices per unit
    runs: int  # split-K's runs (1 without)


@dataclass
class Weight:
    """How the run reads the weight: the share of its bytes that come from HBM, and the
    HBM rate each busy cube core gets then."""

    miss: float
    hbm_rate: float


def _auto_tiles(info: KernelInfo, p: int) -> dict:
    """The cube tiles tile-assign-shapes chooses for a body of p tokens."""
    if info.form == "mhc_pre":
        t = mhc_tiles(p)  # the variant's tiles by body size
    else:
        sa, sacc = ELEM_BYTES[info.a_elem], ELEM_BYTES[info.acc_elem]
        t = choose(p, info.k, info.n, sa, sacc, 1, BUFFERS, BUFFERS, info.target)
    return {"m": t.axes["m"][0], "n": t.axes["n"][0], "k": list(t.axes["k"]), "split_k": t.is_split_k}


def _get(c: Config, d: str, info: KernelInfo, p: int = 0):
    v = given(c, d)
    if v is not None:
        return v
    return _auto_tiles(info, p)[d] if d in CUBE_DIMS else DEFAULT_MERGE.get(d)


def _vec_rows(c: Config, p: int) -> int:
    """The rows of a vector tile; without a pinned count, tile-assign-shapes' first
    candidate within the body (its UB test is not repeated here)."""
    return given(c, "vec_rows", next(r for r in VEC_ROWS if r <= p or r == 1))


def _policy(c: Config, info: KernelInfo, w: str) -> str:
    """A weight's cache policy; without one, tile-annotate-cache's."""
    size = info.k * info.n * ELEM_BYTES[info.a_elem]
    return given(c, f"cache.{w}", weight_policy(size, info.form == "mhc_pre", info.target.l2.size).value)


def _pad(info: KernelInfo, x: int) -> int:
    return pad(x, info.target.cube.fractal)


def cube_shape(c: Config, info: KernelInfo, p: int) -> Cube:
    m = body_m(_get(c, "m", info, p), p, info.target.cube.fractal)
    (k0, k1), split = _get(c, "k", info, p), _get(c, "split_k", info, p)
    n = min(_get(c, "n", info, p), _pad(info, info.n))  # a tile wider than the data is cut to it
    # Pinned tiles that do not fit are cut as tile-assign-shapes cuts them (kL0, kL1):
    # tasks and split-K runs are counted on those, a ragged tail as a tile.
    tiles = CubeTileAttr([m, m], [k0, k1], [n, n], split_k=split)
    tiles, _ = fit(tiles, info.k, info.n, ELEM_BYTES[info.a_elem], info.target, info.acc_elem)
    (k0, k1), n, split = tiles.axes["k"], tiles.axes["n"][0], tiles.is_split_k
    k0, k1 = clip_k(k0, k1, info.k)
    rows = -(-p // m)
    runs = split_runs(info.k, k1, info.a_elem) if split else 1
    reuse = 1 if split else max(g for g in range(1, min(_get(c, "l1_reuse", info), rows) + 1) if rows % g == 0)
    return Cube(m, n, k1, k0, reuse, rows // reuse * -(-info.n // n) * runs, -(-info.k // k1) // runs, runs)


def _transposed(c: Config, info: KernelInfo) -> bool:
    """Whether B is read [N, K] with b_trans (else [K, N]: as written, or host-transposed);
    the mhc_pre variant transposes on the host unless told not to (tile-assign-shapes)."""
    return info.b_trans and not given(c, "host_transpose", info.form == "mhc_pre" and info.host_transposable)


def _lines(t: Target, rows: int, seg: float, row: float) -> float:
    """The bytes a tile of `rows` rows of `seg` contiguous bytes, out of rows of `row`
    bytes, is charged: whole lines per row, or of the whole block when it spans whole rows."""
    line = t.l2.line_bytes
    if seg >= row:
        return -(-rows * row // line) * line
    return rows * -(-seg // line) * line


def _read(t: Target, nbytes: float, w: Weight | None = None) -> float:
    rate = t.model.gm_read_rate
    miss, hbm = (w.miss, min(rate, w.hbm_rate)) if w else (0.0, rate)
    return t.latency.copy_in + nbytes * (1 - miss) / rate + nbytes * miss / hbm + miss * t.l2.miss_penalty


def _write(t: Target, nbytes: float) -> float:
    return nbytes / t.model.gm_write_rate + t.latency.copy_out


_COSTS: dict[int, tuple[Target, CostModel]] = {}


def _cost(t: Target) -> CostModel:
    """The model's prices of `t` (kept per target object: the tuner estimates many configurations)."""
    got = _COSTS.get(id(t))
    if got is None or got[0] is not t:
        got = _COSTS[id(t)] = (t, CostModel(t))
    return got[1]


def _fixpipe(t: Target, info: KernelInfo, g: Cube) -> float:
    """One row tile's output, drained (the device form) or copied to GM (PyPTO 0.2.0's)."""
    acc = ELEM_BYTES[info.acc_elem]
    cost = _cost(t)
    if cost.drain_form:
        return cost.drain(g.m, g.n, acc)
    return _write(t, _pad(info, g.m) * g.n * acc)


def weight(c: Config, info: KernelInfo, bodies: list[tuple[int, int]]) -> Weight:
    """How the run's bodies (count, tokens) read the weight, from HBM or from L2."""
    t, trans = info.target, _transposed(c, info)
    shapes = [(count, cube_shape(c, info, p)) for count, p in bodies]
    reads = sum(count * g.units * g.slices * _weight_bytes(t, info, g, trans) for count, g in shapes)
    size = info.k * info.n * ELEM_BYTES[info.a_elem]
    policies = [_policy(c, info, w) for w in info.weights]
    # `l2.sim_size`: the L2 the model simulates (`l2.size` is the platform's)
    cached = "none_cacheable" not in policies and size <= t.l2.sim_size
    miss = min(1.0, size / reads) if cached and reads else 1.0  # a cached weight's lines miss once
    nbuf = _get(c, "cube_nbuffer", info)
    busy = min(t.cube_cores, sum(count * -(-g.units // nbuf) for count, g in shapes)) or 1
    return Weight(miss, t.model.hbm_total / busy)


def _weight_bytes(t: Target, info: KernelInfo, g: Cube, trans: bool) -> float:
    """The bytes one K slice of the weight is charged: [nL0, kL1] rows with b_trans, else [kL1, nL0]."""
    sa = ELEM_BYTES[info.a_elem]
    if trans:  # the weight is [N, K]
        return _lines(t, min(g.n, info.n), g.k1 * sa, info.k * sa)
    return _lines(t, g.k1, g.n * sa, info.n * sa)


def _slice(t: Target, info: KernelInfo, g: Cube, rows: int, trans: bool) -> tuple[float, float, float]:
    """One K slice of a row tile: the activation's copy-in, the weight's bytes, and the
    longer of MTE1 (L1 -> L0A/L0B, a b_trans weight transposed) and the mmads."""
    sa = ELEM_BYTES[info.a_elem]
    act = _read(t, _lines(t, rows, g.k1 * sa, info.k * sa))
    wbytes = _weight_bytes(t, info, g, trans)
    factor = t.dma.transpose_rate_factor if trans else 1
    mte1 = g.n * g.k1 * sa / (t.path_rate("l1", "l0b") * factor) + rows * g.k1 * sa / t.path_rate("l1", "l0a")
    mmad = -(-g.k1 // g.k0) * _cost(t).mmad(g.m, g.k0, g.n, info.a_elem)  # one mmad per kL0 block
    return act, wbytes, max(mte1, mmad)


def cube_tasks(c: Config, info: KernelInfo, p: int, w: Weight) -> Task:
    """The cube tasks of one body of p tokens and the cycles of each."""
    t, g = info.target, cube_shape(c, info, p)
    act, wbytes, compute = _slice(t, info, g, min(g.m, p), _transposed(c, info))
    first = g.slices * max(act + _read(t, wbytes, w), compute)  # the unit's first row tile loads the weight
    later = g.slices * max(act, compute)
    out = _fixpipe(t, info, g)  # (split-K's: a partial sum)
    unit = first + (g.reuse - 1) * later + g.reuse * out
    nbuf = _get(c, "cube_nbuffer", info)
    per = min(nbuf, g.units)
    if _keeps_activation(info, g, per):
        # the task's later units reuse the first's activation slices and load every weight slice
        reused = g.reuse * (g.slices * max(_read(t, wbytes, w), compute) + out)
        return Task(-(-g.units // nbuf), unit + (per - 1) * reused)
    return Task(-(-g.units // nbuf), unit * per)


def _keeps_activation(info: KernelInfo, g: Cube, per: int) -> bool:
    """tile-to-npu's `keeps_activation`, without the weight slices the group keeps: a task
    of several whole columns of one split run whose L1 holds the group's activation over
    the whole K beside two copies of each streaming slice."""
    t, sa = info.target, ELEM_BYTES[info.a_elem]
    if per == 1 or g.runs > 1 or -(-info.n // g.n) % per or g.slices > MAX_KEPT_SLICES:
        return False
    act, wt = _pad(info, g.m) * g.k1 * sa, _pad(info, g.n) * g.k1 * sa
    return BUFFERS * (act + wt) + g.reuse * g.slices * act <= t.capacity("l1")


def vec_tasks(c: Config, info: KernelInfo, p: int) -> Task:
    """The vector tasks of one body of p tokens (the stages before or after the cube)."""
    t = info.target
    cols = max(info.vec_cols, default=info.k)
    plan = info.phases.for_config(c, p) if info.phases is not None else None
    if plan:  # the first phase's plan, as tile-assign-shapes makes it
        r, merge, _ = plan[0]
    else:
        r = min(_vec_rows(c, p), p)
        merge = min(_get(c, "vec_nbuffer", info), max_copies(t.sync.event_ids))
    tiles = -(-p // r)
    elems = r * cols
    repeats = elems * ELEM_BYTES["f32"] / t.vector.bytes_per_repeat
    work = VEC_OPS_PER_ELEM * (repeats + t.vector.fixed_cycles)
    tile = _read(t, elems * ELEM_BYTES["bf16"]) + work + _write(t, elems * ELEM_BYTES["bf16"])
    return Task(-(-tiles // merge), tile * min(merge, tiles))


def sum_tasks(c: Config, info: KernelInfo, p: int) -> Task | None:
    """Split-K's vector group of one body: a task per output tile adds the runs' f32
    partial sums (copied in one after another) and stores the result (tile-to-npu's
    `emit_sum_group`); None without split-K."""
    g = cube_shape(c, info, p)
    runs = g.runs
    if runs == 1:
        return None
    t, elems = info.target, min(g.m, p) * g.n
    f32 = elems * ELEM_BYTES["f32"]
    adds = (runs - 1) * (f32 / t.vector.bytes_per_repeat + t.vector.fixed_cycles)
    tile = runs * _read(t, f32) + adds + _write(t, elems * ELEM_BYTES["bf16"])
    return Task(-(-p // g.m) * -(-info.n // g.n), tile)


def _spread(tasks: list[Task], cores: int, turnaround: float) -> float:
    """Greedy list scheduling's bound: the work over the cores, at least the waves of the
    largest group of equal tasks (33 tasks on 24 cores take two, not 1.4)."""
    work = sum(x.count * (x.cycles + turnaround) for x in tasks)
    waves = (-(-x.count // cores) * (x.cycles + turnaround) - turnaround for x in tasks if x.count)
    return max(work / cores, max(waves, default=0.0))


def estimate(c: Config, info: KernelInfo, tokens: int) -> float:
    """Estimated cycles of `c` at `tokens` tokens."""
    t = info.target
    loops = schedule(0, tokens, normalise(given(c, "unroll", DEFAULT_UNROLL)))
    bodies = [((end - begin) // f, f) for begin, end, f in loops]
    w = weight(c, info, bodies)
    per = {p: (cube_tasks(c, info, p, w), vec_tasks(c, info, p), sum_tasks(c, info, p)) for _, p in bodies}
    cube = [Task(n * per[p][0].count, per[p][0].cycles) for n, p in bodies]
    vec = [Task(n * x.count, x.cycles) for n, p in bodies for x in per[p][1:] if x is not None]
    turn = t.latency.task_turnaround
    span = _spread(cube, t.cube_cores, turn) + _spread(vec, t.vector_cores, turn) * VEC_SPAN_SHARE
    stitch = given(c, "stitch")
    stitches = -(-sum(n for n, _ in bodies) // stitch) if stitch else 1
    # a body's phases run one after the other: its vector tasks, then its cube tasks (or
    # the reverse), each phase in rounds over the cores
    chain = max(
        _spread([x], t.cube_cores, turn) + sum(_spread([v], t.vector_cores, turn) for v in vs if v is not None)
        for x, *vs in per.values()
    )
    chain += _handover(t)
    return stitches * t.latency.stitch + max(span, stitches * chain) + t.latency.task_ready


def _handover(t: Target) -> float:
    """From a task's end to the start of one that depends on it."""
    return t.latency.task_ready + t.latency.task_dispatch
