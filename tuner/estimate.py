"""A quick analytic estimate of a configuration's cycles, from the target's figures,
to rank candidates before the machine model runs the promising ones.

It counts what the model charges at the granularity of tasks: per loop body the cube
tasks (K slices streamed through L1, the weight loaded once per unit of row tiles, the
mmads, the fixpipe) and the vector tasks (rows in, the stage's ops, rows out); tasks
spread over the cores with the dispatch latencies; stitches run one after another. It
ignores L2 and pipe overlap inside a task beyond double buffering, so it ranks, it does
not predict: the guided search checks its picks with the model.
"""

from __future__ import annotations

from dataclasses import dataclass

from pto.dialects.common import ELEM_BYTES
from pto.passes.tile_assign_shapes import ceil16
from pto.passes.tile_unroll import SEED_CANDIDATES, normalise, schedule
from pto.targets import Target
from pto.tuner.kernel import KernelInfo
from pto.tuner.prune import _m_tile
from pto.tuner.space import Config

# The pass defaults a configuration that does not name a dimension gets (docs/passes.md).
DEFAULT_UNROLL = list(SEED_CANDIDATES)
DEFAULT_VEC_ROWS = 4
DEFAULT_CUBE = {"m": 128, "n": 128, "k": [256, 1024], "split_k": False}
# The mhc_pre variant's tiles for bodies over 64 tokens (tile-assign-shapes).
MHC_CUBE = {"m": 16, "n": 128, "k": [512, 2048], "split_k": True}
DEFAULT_MERGE = {"l1_reuse": 2, "vec_nbuffer": 2, "cube_nbuffer": 1}
VEC_OPS_PER_ELEM = 6  # a norm's vcast, vmul, vreduce, vdiv, vmul, vcast: the vector work per element
MAX_VEC_MERGE = 4  # tile-to-npu merges at most 4 vector tiles into a task


@dataclass
class Task:
    count: int
    cycles: float


def _get(c: Config, d: str, info: KernelInfo):
    cube = MHC_CUBE if info.form == "mhc_pre" else DEFAULT_CUBE
    return c.get(d, cube.get(d, DEFAULT_MERGE.get(d)))


def _dma(t: Target, nbytes: float, read: bool) -> float:
    rate = t.model.gm_read_rate if read else t.model.gm_write_rate
    return nbytes / rate + (t.latency.copy_in if read else t.latency.copy_out)


def cube_tasks(c: Config, info: KernelInfo, p: int) -> Task:
    """The cube tasks of one body of p tokens and the cycles of each."""
    t, sa = info.target, ELEM_BYTES[info.a_elem]
    m, (_, k1), split = _m_tile(_get(c, "m", info), p), _get(c, "k", info), _get(c, "split_k", info)
    n = min(_get(c, "n", info), ceil16(info.n))  # a tile wider than the data is cut to it
    rows = -(-p // m)
    runs = info.k // k1 if split else 1
    reuse = 1 if split else max(g for g in range(1, min(_get(c, "l1_reuse", info), rows) + 1) if rows % g == 0)
    units = rows // reuse * -(-info.n // n) * runs
    slices = info.k // k1 // runs
    mmad = ceil16(m) * n * k1 / t.macs_per_cycle(info.a_elem)
    act, weight = _dma(t, ceil16(m) * k1 * sa, True), _dma(t, n * k1 * sa, True)
    first = slices * max(act + weight, mmad)  # the unit's first row tile loads the weight
    later = slices * max(act, mmad)
    out = _dma(t, ceil16(m) * n * ELEM_BYTES[info.acc_elem], False)
    unit = first + (reuse - 1) * later + reuse * out
    nbuf = _get(c, "cube_nbuffer", info)
    return Task(-(-units // nbuf), unit * min(nbuf, units))


def vec_tasks(c: Config, info: KernelInfo, p: int) -> Task:
    """The vector tasks of one body of p tokens (the stages before or after the cube)."""
    t = info.target
    cols = max(info.vec_cols, default=info.k)
    r = min(c.get("vec_rows", DEFAULT_VEC_ROWS), p)
    merge = min(_get(c, "vec_nbuffer", info), MAX_VEC_MERGE)
    tiles = -(-p // r)
    elems = r * cols
    repeats = elems * ELEM_BYTES["f32"] / t.vector.bytes_per_repeat
    work = VEC_OPS_PER_ELEM * (repeats + t.vector.fixed_cycles)
    tile = _dma(t, elems * ELEM_BYTES["bf16"], True) + work + _dma(t, elems * ELEM_BYTES["bf16"], False)
    return Task(-(-tiles // merge), tile * min(merge, tiles))


def _spread(tasks: list[Task], cores: int, turnaround: float) -> float:
    """Greedy list scheduling's bound: the work over the cores, at least the longest task."""
    work = sum(x.count * (x.cycles + turnaround) for x in tasks)
    return max(work / cores, max((x.cycles for x in tasks), default=0.0))


def estimate(c: Config, info: KernelInfo, tokens: int) -> float:
    """Estimated cycles of `c` at `tokens` tokens."""
    t = info.target
    loops = schedule(0, tokens, normalise(c.get("unroll", DEFAULT_UNROLL)))
    bodies = [(end - begin) // f for begin, end, f in loops for _ in [0]]
    sizes = [f for _, _, f in loops]
    cube = [Task(n * x.count, x.cycles) for n, p in zip(bodies, sizes) for x in [cube_tasks(c, info, p)]]
    vec = [Task(n * x.count, x.cycles) for n, p in zip(bodies, sizes) for x in [vec_tasks(c, info, p)]]
    turn = t.latency.task_turnaround
    span = _spread(cube, t.cube_cores, turn) + _spread(vec, t.vector_cores, turn) / 2
    stitches = -(-sum(bodies) // c["stitch"]) if "stitch" in c else 1
    chain = max((x.cycles for x in vec), default=0) + max((x.cycles for x in cube), default=0)
    return span + stitches * (t.latency.stitch + chain) + 2 * t.latency.task_ready
