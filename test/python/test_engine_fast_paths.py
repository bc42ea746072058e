"""The fast paths taken for the compiled engine's speed give what the plain ones give:
the L2's three ways through one access (the line-by-line round for a few ascending
lines, the vector round, the rounds of a set-conflicting access) leave the same cache,
counter for counter and way for way; a never-cached tensor's accesses counted as misses
without a lookup leave what the lookup leaves; bf16 widens to f32 as ml_dtypes' cast does;
a copy, a product accumulated in place and a poison fill give the plain forms' bits; the
scheduler's earliest workers without a sort are the sorted order's."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from pto.interp import numerics as nx
from pto.interp.l2 import SMALL, L2Cache
from pto.interp.writes import add_tiles

LINE, SETS, WAYS = 64, 8, 2


def state(c: L2Cache) -> tuple:
    stats = {n: vars(s) for n, s in c.stats.items()}
    return (c.tags.tolist(), c.stamp.tolist(), c.dirty.tolist(), c.owner.tolist(), c.clock, c.written_back, stats)


def accesses(seed: int, n: int, most: int):
    """Random unique ascending line runs, some spanning more than one sweep of the sets."""
    rng = np.random.default_rng(seed)
    for _ in range(n):
        size = int(rng.integers(1, most + 1))
        start = int(rng.integers(0, 6 * SETS))
        span = int(rng.choice([size, SETS, 3 * SETS]))
        picked = np.sort(rng.choice(np.arange(start, start + max(span, size)), size, replace=False))
        yield picked.astype(np.int64), f"t{rng.integers(3)}", bool(rng.integers(2)), bool(rng.integers(4))


@pytest.mark.parametrize("seed", range(6))
def test_small_vector_and_conflict_rounds_agree(seed: int) -> None:
    fast, ref = L2Cache(SETS * WAYS * LINE, LINE, WAYS), L2Cache(SETS * WAYS * LINE, LINE, WAYS)
    smalls = conflicts = 0
    for lines, tensor, write, cacheable in accesses(seed, 400, SMALL + 4):
        got = fast.access(lines, tensor, write, cacheable, ascending=True)
        want = ref.access(lines, tensor, write, cacheable)
        assert got == want
        smalls += lines.size <= SMALL and lines[-1] - lines[0] < SETS
        conflicts += lines[-1] - lines[0] >= SETS  # rounds, each of a few lines: line by line
    fast.flush()
    ref.flush()
    assert state(fast) == state(ref)
    assert smalls > 50 and conflicts > 50 and fast.written_back > 0  # every path taken, evictions seen


def test_rounds_of_conflicting_lines_come_from_one_sort() -> None:
    """`_rounds` splits lines as taking the first line of each set, in order, round after
    round does (quadratic when many lines share a set: a one-set L2)."""
    from pto.interp.l2 import _rounds

    def one_by_one(lines: np.ndarray, sets: np.ndarray) -> list:
        out = []
        while lines.size:
            _, first = np.unique(sets, return_index=True)
            first.sort()
            out.append((lines[first], sets[first]))
            lines, sets = np.delete(lines, first), np.delete(sets, first)
        return out

    rng = np.random.default_rng(7)
    for n_sets in (1, 2, 3, 8, 64):
        for _ in range(40):
            lines = rng.permutation(rng.choice(4 * n_sets + 60, int(rng.integers(1, 60)), replace=False))
            lines = np.sort(lines) if rng.integers(2) else lines
            ordered, sets, bounds = _rounds(lines, lines % n_sets)
            got = [(ordered[a:b].tolist(), sets[a:b].tolist()) for a, b in itertools.pairwise(bounds)]
            assert got == [(a.tolist(), b.tolist()) for a, b in one_by_one(lines, lines % n_sets)]


def test_the_reference_cache_takes_the_vector_round(monkeypatch) -> None:
    c = L2Cache(SETS * WAYS * LINE, LINE, WAYS)
    monkeypatch.setattr(L2Cache, "_round_small", lambda *a: pytest.fail("small round without `ascending`"))
    assert c.access(np.array([1, 2], np.int64), "a", False) == (0, 2)


def test_a_never_cached_tensor_is_counted_as_the_lookup_would(monkeypatch) -> None:
    """Windows of a none-cacheable weight between cacheable accesses of another tensor:
    with the shortcut and without, the same answers and the same cache, and a later
    cacheable access of the weight turns the shortcut off."""
    from pto.interp.machine import Machine
    from pto.targets import load_target

    def machine(shortcut: bool) -> tuple:
        m = Machine(load_target(), l2_size=SETS * WAYS * 512)
        if not shortcut:
            monkeypatch.setattr(m.l2, "never_cached", lambda name: False)
        return m, m.gm("x", np.zeros((64, 96), np.float32)), m.gm("w", np.zeros((48, 160), np.float32))

    rng = np.random.default_rng(3)
    steps = []
    for step in range(300):
        late = step > 250  # the weight's first cacheable accesses
        pick = 1 if late else int(rng.integers(2))
        rows, cols = int(rng.integers(0, 9)), int(rng.integers(1, 40))
        shape = (64, 96) if pick == 0 else (48, 160)
        at = (int(rng.integers(0, shape[0] - rows + 1)), int(rng.integers(0, shape[1] - cols + 1)))
        steps.append((pick, at, (rows, cols), step % 3 == 0, late or pick == 0))
    fast, ref = machine(True), machine(False)
    taken = 0
    for pick, at, ext, write, cacheable in steps:
        taken += pick == 1 and not cacheable and fast[0].l2.never_cached("w")
        assert fast[0].gm_access(fast[1 + pick], at, ext, write, cacheable) == ref[0].gm_access(
            ref[1 + pick], at, ext, write, cacheable
        )
    assert state(fast[0].l2) == state(ref[0].l2)
    assert taken > 50 and not fast[0].l2.never_cached("w")


@pytest.mark.parametrize("seed", range(3))
def test_a_few_line_tile_in_one_call_is_the_plain_access(monkeypatch, seed: int) -> None:
    """`Machine.gm_access` of a tile of a few lines (`L2Cache.access_lines`, one call)
    against the same tile's lines through the reference access (the vector round) of a
    plain cache, in a small L2 that evicts: the same answers, dirty evictions, counters
    (bursts too) and ways."""
    from pto.interp.l2 import tile_lines
    from pto.interp.machine import Machine
    from pto.targets import load_target

    m = Machine(load_target(), l2_size=SETS * WAYS * 512)
    plain = L2Cache(SETS * WAYS * 512, 512, m.l2.ways)
    tensors = [m.gm("x", np.zeros((64, 96), np.float32)), m.gm("w", np.zeros((48, 160), np.float32))]
    for t in tensors:
        plain.tensor_id(t.name)
    calls = []
    real = L2Cache.access_lines
    monkeypatch.setattr(L2Cache, "access_lines", lambda c, *a: calls.append(1) or real(c, *a))
    rng = np.random.default_rng(seed)
    for step in range(400):
        t = tensors[int(rng.integers(2))]
        rows, cols = int(rng.integers(0, 5)), int(rng.integers(1, 40))
        at = (int(rng.integers(0, t.array.shape[0] - rows + 1)), int(rng.integers(0, t.array.shape[1] - cols + 1)))
        write, cacheable = step % 3 == 0, bool(rng.integers(4))
        first, pattern = tile_lines(t.base, t.array.shape, at, (rows, cols), 4, 512)
        plain.stats[t.name].bursts += pattern.runs
        before = plain.written_back
        want = (*plain.access(pattern.rel + first, t.name, write, cacheable), plain.written_back - before)
        assert m.gm_access(t, at, (rows, cols), write, cacheable) == want
    assert state(m.l2) == state(plain) and plain.written_back > 0
    assert len(calls) > 100  # (the others: a never-cached tensor, or lines over more sets)


def test_bf16_widens_to_f32_as_ml_dtypes_does_for_every_pattern() -> None:
    every = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16).view(nx.DTYPES["bf16"])
    want = every.astype(np.float32)
    for x, y in ((every, want), (every.reshape(256, 256).T, want.reshape(256, 256).T), (every[7], want[7])):
        got = nx.f32(x)
        assert got.dtype == np.float32 and got.shape == np.shape(y)
        assert np.array_equal(np.asarray(got).view(np.uint32), np.asarray(y).view(np.uint32))


@pytest.mark.parametrize("elem", ["bf16", "f16", "f32", "i8", "i32"])
def test_a_copy_moves_the_same_bits_as_an_assignment(elem: str) -> None:
    from pto.interp.npu_ops import move

    rng = np.random.default_rng(0)
    dt = nx.DTYPES[elem]
    src = rng.integers(0, 256, (16, 24 * dt.itemsize), np.uint8).view(dt)  # every pattern, NaNs too
    for data in (src[2:10, 4:12], src[2:10, 4:12].T):
        want = np.zeros(data.shape, dt)
        got = np.zeros_like(want)
        want[...] = data
        move(got, data)
        assert np.array_equal(got.view(np.uint8), want.view(np.uint8))
    narrow = rng.standard_normal((8, 8)).astype(np.float16)
    widened = np.zeros((8, 8), np.float32)
    move(widened, narrow)  # unequal dtypes: a converting assignment
    assert np.array_equal(widened, narrow.astype(np.float32))


@pytest.mark.parametrize("elem", ["bf16", "i8"])
def test_an_mmad_accumulates_in_place_the_bits_of_a_plain_sum(elem: str) -> None:
    from pto.interp.npu_ops import mmad_value

    rng = np.random.default_rng(1)
    a = (
        rng.standard_normal((16, 32)).astype(nx.DTYPES[elem])
        if elem == "bf16"
        else rng.integers(-128, 128, (16, 32)).astype(np.int8)
    )
    b = (
        rng.standard_normal((32, 8)).astype(nx.DTYPES[elem])
        if elem == "bf16"
        else rng.integers(-128, 128, (32, 8)).astype(np.int8)
    )
    acc = nx.matmul(a, b) * 3
    c = acc.copy()
    mmad_value(a, b, c, True)
    assert c.dtype == acc.dtype and np.array_equal(
        c.view(np.uint32), (acc + nx.matmul(a, b)).astype(acc.dtype).view(np.uint32)
    )
    mmad_value(a, b, c, False)
    assert np.array_equal(c.view(np.uint32), nx.matmul(a, b).view(np.uint32))


def test_an_int32_accumulator_wraps_in_place() -> None:
    """An int8 mmad added into an int32 accumulator near its top wraps mod 2^32, as the
    sum taken in int64 and cast back does."""
    from pto.interp.npu_ops import mmad_value

    a = np.full((2, 64), -128, np.int8)
    c = np.full((2, 2), 2**31 - 5, np.int32)
    want = (c.astype(np.int64) + 64 * 2**14).astype(np.int32)
    mmad_value(a, a.T.copy(), c, True)
    assert np.array_equal(c, want) and int(c[0, 0]) < 0


@pytest.mark.parametrize("elem", ["bf16", "f16", "f32", "i8", "i32"])
def test_poison_fills_the_bits_a_plain_fill_gives(elem: str) -> None:
    dt = nx.DTYPES[elem]
    want = np.full((3, 5), np.iinfo(dt).min if dt.kind == "i" else np.nan, dt)
    got = nx.poison((3, 5), dt)
    assert got.dtype == dt and np.array_equal(got.view(np.uint8), want.view(np.uint8))
    assert nx.poison((), dt).tobytes() == want[0, 0].tobytes()


def test_a_buffers_dependence_key_is_one_interned_string_per_buffer() -> None:
    """The pipe timing looks a buffer's key up several times per op: the key a compiled
    program holds as a constant is the very object a `Buf` carries, so a lookup compares
    identities, and on-chip and GM keys never collide."""
    from pto.dialects.npu import Space
    from pto.interp import npu_ops as ops
    from pto.interp.machine import GmTensor, dependence_key

    buf = ops.Buf(np.zeros(4, np.float32), Space.L1, 64)
    assert buf.key is dependence_key(Space.L1, int("64")) and isinstance(buf.key, str)
    assert buf.key != dependence_key(Space.UB, 64) != dependence_key(Space.L1, 0)
    gm = GmTensor("l1:64", np.zeros(4, np.float32), 0)
    assert gm.key is GmTensor("l1:64", np.zeros(2, np.float32), 512).key and gm.key != buf.key


def test_the_earliest_workers_without_a_sort_are_the_sorted_orders() -> None:
    """`Clocks.first` and `least_besides` (an argmin and a partition) against the stable
    sort the rules are written on, with ties and infinite clocks."""
    from pto.interp.compiled import Clocks

    rng = np.random.default_rng(3)
    for n in (1, 2, 3, 9, 72):
        for _ in range(200):
            at = rng.choice([0.0, 5.0, 5.0, 7.5, np.inf], n) if n > 1 else rng.choice([1.0, np.inf], 1)
            c = Clocks(at.copy())
            order = sorted(range(n), key=lambda i: (at[i], i))
            assert c.first() == order[0] and c.order() == order
            for i in range(n):
                assert c.least_besides(i) == min((at[j] for j in range(n) if j != i), default=np.inf)


def test_an_mmad_priced_once_per_shape_is_its_two_prices(monkeypatch) -> None:
    """`CostModel.mmad_priced`: `mmad` and `mmad_macs` of the shape and valid rows,
    computed once per key (an op-heavy run prices each of its mmads)."""
    from pto.interp.cost import CostModel
    from pto.targets import load_target

    cost = CostModel(load_target("ascend910b1"))
    for rows in (None, 0, 1, 16, 17, 99):
        want = (cost.mmad(16, 512, 64, "bf16", rows), cost.mmad_macs(16, 512, 64, "bf16", rows))
        assert cost.mmad_priced(16, 512, 64, "bf16", rows) == want
    monkeypatch.setattr(cost, "mmad_macs", lambda *a: pytest.fail("priced again"))
    assert cost.mmad_priced(16, 512, 64, "bf16", 1)[1] == 16 * 512 * 64


@pytest.mark.parametrize("seed", range(6))
def test_writes_counted_after_the_run_are_a_slice_per_tile(seed: int) -> None:
    """Tiles of a few extents (many of one, so the difference-array path runs, and some
    reaching past the end, empty or of another rank's indexing) counted at once give
    `counts[slices] += 1` per tile."""
    rng = np.random.default_rng(seed)
    shape = (int(rng.integers(1, 40)), int(rng.integers(1, 40)))
    extents = [(int(rng.integers(0, 9)), int(rng.integers(0, 9))) for _ in range(3)]
    tiles = [
        ((int(rng.integers(-2, shape[0] + 3)), int(rng.integers(0, shape[1] + 3))), extents[int(rng.integers(0, 3))])
        for _ in range(int(rng.integers(1, 3000)))
    ]
    want = np.zeros(shape, np.int32)
    for (o0, o1), (e0, e1) in tiles:
        want[o0 : o0 + e0, o1 : o1 + e1] += 1
    got = np.zeros(shape, np.int32)
    add_tiles(got, tiles)
    assert got.dtype == want.dtype and (got == want).all()


def _hbm_reference(used: dict, win, cap, start: float, nbytes: float, rate: float) -> float:
    """The HBM booking window by window, plainly: each window's share at the core's
    rate, cut to what is left of the transfer and of the window's bandwidth."""
    t, left = start, float(nbytes)
    while left > 0:
        w = int(t // win)
        u = used.get(w, 0.0)
        end = (w + 1) * win
        n = min(left, rate * (end - t), cap - u)
        if n <= 0:
            t = end
            continue
        used[w] = u + n
        left -= n
        t = t + n / rate if left <= 0 else end
    return t - start


@pytest.mark.parametrize("seed", range(20))
def test_hbm_booking_is_the_plain_window_loop(seed: int) -> None:
    """`Machine.hbm_time` (the next window by a count, not a division) books and answers
    what the plain loop does, bit for bit, on windows full and not."""
    from pto.interp.machine import Machine

    rng = np.random.default_rng(seed)
    win = [512, 512.0, 100, 7][seed % 4]
    cap = [768 * 512, 1000, 50.5, 20000][seed // 4 % 4]
    m = Machine.__new__(Machine)
    m._hbm_used, m._hbm_window, m._hbm_cap = {}, win, cap
    used: dict = {}
    for _ in range(300 if cap >= 1000 else 30):  # (a small cap: each booking spans thousands of windows)
        start = float(rng.uniform(0, 5000)) if rng.random() < 0.7 else float(rng.integers(0, 5000))
        nbytes = [0, 512, 65536, int(rng.integers(1, 100000))][int(rng.integers(0, 4))]
        rate = [32, 32.0, 17.3, 64][int(rng.integers(0, 4))]
        got, want = m.hbm_time(start, nbytes, rate), _hbm_reference(used, win, cap, start, nbytes, rate)
        assert got == want and type(got) is type(want)
    assert list(m._hbm_used.items()) == list(used.items())
