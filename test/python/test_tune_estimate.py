"""pto-tune's analytic estimate (tuner/estimate.py): the weight's reads from L2 or HBM,
whole lines per row, the tasks and tiles tile-to-npu and tile-assign-shapes make, a
cube_nbuffer task's kept activation."""

import pytest
from kernels import SMALL


def _info(text=SMALL):
    from pto.tuner.evaluate import _parsed
    from pto.tuner.kernel import kernel_info

    return kernel_info(_parsed(text, "small"))


# One 64-token body in four 16-row tiles, each its own unit: the weight is read four times.
REREAD = {"unroll": [64, 1], "m": 16, "n": 128, "k": [128, 256], "split_k": False, "l1_reuse": 1, "cube_nbuffer": 1}


def test_estimate_a_cached_weight_rereads_from_l2():
    from pto.tuner.estimate import estimate, weight

    info = _info()
    cached, uncached = ({**REREAD, "cache.w": p} for p in ("normal", "none_cacheable"))
    assert weight(cached, info, [(1, 64)]).miss == pytest.approx(0.25)  # one cold read of four
    assert weight(uncached, info, [(1, 64)]).miss == 1.0
    assert estimate(cached, info, 64) < estimate(uncached, info, 64)


def test_estimate_a_weight_too_big_for_l2_misses_every_time():
    from dataclasses import replace

    from pto.tuner.estimate import weight

    info = _info()
    small = replace(info, target=info.target.changed(l2__sim_size=128 * 256 * 2 - 1))  # one byte short of the weight
    assert weight({**REREAD, "cache.w": "normal"}, small, [(1, 64)]).miss == 1.0


def test_estimate_charges_whole_lines_of_a_narrow_weight_tile():
    from pto.tuner.estimate import _slice, cube_shape

    info = _info()  # w [128, 256] read with b_trans: [n, kL1] tiles, rows of kL1 * 2 bytes
    line = info.target.l2.line_bytes
    narrow = cube_shape({**REREAD, "k": [64, 64]}, info, 64)  # 128-byte rows: each pays a line
    assert _slice(info.target, info, narrow, 16, True)[1] == narrow.n * line
    wide = cube_shape(REREAD, info, 64)  # 512-byte rows: exactly a line
    assert _slice(info.target, info, wide, 16, True)[1] == wide.n * wide.k1 * 2


def _tasks_per_body(c: dict, text: str = SMALL) -> dict[str, int]:
    """Per `npu.tasks` group of the lowered configuration, its tasks per body."""
    import re

    from pto.frontend.api import compile
    from pto.tuner.evaluate import _parsed
    from pto.tuner.pin import pin

    npu_ir = str(compile(pin(_parsed(text, "small"), c)).levels["npu"])
    return {name: int(n) for name, n in re.findall(r'npu.tasks "([^"]+)" \w+ .* in \(%\w+, (\d+)\)', npu_ir)}


@pytest.mark.parametrize("split", [False, True])
def test_estimate_counts_the_tasks_tile_to_npu_makes(split):
    """The cube tasks of a body (split-K runs as tile-to-npu cuts them: 2 kL1 for bf16)
    and split-K's sum group."""
    from pto.tuner.estimate import cube_tasks, sum_tasks, weight

    info = _info()
    c = {**REREAD, "k": [64, 64], "split_k": split}
    got = _tasks_per_body(c)
    w = weight(c, info, [(1, 64)])
    assert cube_tasks(c, info, 64, w).count == got["linear.64"]
    s = sum_tasks(c, info, 64)
    assert (s.count if s else None) == got.get("linear.64.sum")
    if split:  # K = 256 in runs of 128
        assert got["linear.64"] == 2 * _tasks_per_body({**c, "split_k": False})["linear.64"]


def test_estimate_of_an_unpinned_cube_tile_takes_the_pass_s_choice():
    import re

    from pto.frontend.api import compile
    from pto.tuner.estimate import cube_shape
    from pto.tuner.evaluate import _parsed
    from pto.tuner.pin import pin

    info, c = _info(), {"unroll": [64, 1]}
    tile_ir = compile(pin(_parsed(SMALL, "small"), c)).text("tile")
    m, k0, k1, n = re.search(r"tiles <m = \[(\d+), \d+\], k = \[(\d+), (\d+)\], n = \[(\d+),", tile_ir).groups()
    g = cube_shape(c, info, 64)
    assert (g.m, g.n, g.k0, g.k1) == (int(m), int(n), int(k0), int(k1))


WIDE = SMALL.replace("128x256", "512x1024").replace("?x256", "?x1024").replace("?x128", "?x512")


def test_estimate_cuts_pinned_tiles_as_tile_assign_shapes_does():
    """A pinned [256, 1024] K tile with 512 columns does not fit L0B, nor then L1: the
    pass cuts it to [64, 256], and the estimate counts its tasks and split-K runs on that."""
    import re

    from pto.frontend.api import compile
    from pto.tuner.estimate import cube_shape, cube_tasks, weight
    from pto.tuner.evaluate import _parsed
    from pto.tuner.pin import pin

    info = _info(WIDE)
    c = {"unroll": [64, 1], "m": 64, "n": 512, "k": [256, 1024], "split_k": True, "cube_nbuffer": 1}
    tile_ir = compile(pin(_parsed(WIDE, "small"), c)).text("tile")
    k0, k1 = re.search(r"tiles <m = \[\d+, \d+\], k = \[(\d+), (\d+)\]", tile_ir).groups()
    g = cube_shape(c, info, 64)
    assert (g.k0, g.k1) == (int(k0), int(k1)) == (64, 256)
    assert cube_tasks(c, info, 64, weight(c, info, [(1, 64)])).count == _tasks_per_body(c, WIDE)["linear.64"]


def test_estimate_a_cube_nbuffer_task_loads_its_activation_once():
    """Two columns in one task (cube_nbuffer 2): tile-to-npu keeps the activation in L1
    for the second, so the task costs less than two one-column tasks; with split-K's
    runs it is not kept."""
    from pto.tuner.estimate import cube_tasks, weight

    info = _info()
    base = {"unroll": [16, 1], "m": 16, "n": 64, "k": [128, 256], "l1_reuse": 1, "split_k": False}
    one, two = ({**base, "cube_nbuffer": nb} for nb in (1, 2))
    w = weight(one, info, [(1, 16)])
    single, merged = cube_tasks(one, info, 16, w), cube_tasks(two, info, 16, w)
    assert merged.count * 2 == single.count and merged.cycles < 2 * single.cycles
    one, two = ({**base, "k": [64, 64], "split_k": True, "cube_nbuffer": nb} for nb in (1, 2))
    assert cube_tasks(two, info, 16, w).cycles == 2 * cube_tasks(one, info, 16, w).cycles


def test_estimate_charges_a_tile_of_whole_rows_as_one_block():
    from pto.tuner.estimate import _lines

    t = _info().target
    line = t.l2.line_bytes  # 16 rows of 96 bytes (an [N = 24] f32 weight, host-transposed)
    assert _lines(t, 16, 96, 96) == -(-16 * 96 // line) * line < 16 * line
    assert _lines(t, 16, 96, 192) == 16 * line  # half rows: a line each


def test_estimate_spreads_equal_tasks_in_whole_waves():
    """25 equal tasks on 24 cores: two waves (the second one task), not 25/24 of one."""
    from pto.tuner.estimate import Task, _spread

    assert _spread([Task(24, 1000.0)], 24, 100.0) == 1100.0  # the work over the cores, with its turnarounds
    assert _spread([Task(25, 1000.0)], 24, 100.0) == 2100.0  # two tasks back to back on one core


def test_estimate_counts_a_kl1_past_k_as_tile_to_npu_cuts_it():
    """K = 256 with a pinned kL1 of 512: tile-to-npu's L1 slices are K's 256 columns
    (`planning.cube.clip_k`), and so are the estimate's (it counted 512)."""
    import re

    from pto.frontend.api import compile
    from pto.tuner.estimate import cube_shape
    from pto.tuner.evaluate import _parsed
    from pto.tuner.pin import pin

    c = {**REREAD, "k": [64, 512]}
    npu_ir = str(compile(pin(_parsed(SMALL, "small"), c)).levels["npu"])
    l1 = {int(k) for k in re.findall(r"!npu.buf<\d+x(\d+)xbf16, l1>", npu_ir)}
    got = cube_shape(c, _info(), 64)
    assert (got.k0, got.k1) == (64, 256) and max(l1) == 256, l1
