"""A group's stacked product without its zero rows (`pto.interp.stacked_mm`) against the
per-task products (one 2-D product per tile, as `npu_ops.mmad_value` computes it), bit
for bit, and the stacked pass's slots taking a product without a copy."""

from __future__ import annotations

import numpy as np
import pytest

from pto.interp import numerics as nx
from pto.interp import stacked, stacked_mm
from pto.interp.machine import GmTensor

BF16 = nx.DTYPES["bf16"]


def tiles(rng, shape: tuple[int, ...], live_rows: int) -> np.ndarray:
    """bf16 tiles whose rows past `live_rows` are zeros, some of them negative."""
    x = rng.standard_normal(shape).astype(BF16)
    x[..., live_rows:, :] = 0
    x[..., -1, :] = -0.0
    return x


def alone(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Every task's product by itself, as the per-task engine computes it."""
    b, p = max(x.shape[0], y.shape[0]), max(x.shape[1], y.shape[1])
    xs, ys = np.broadcast_to(x, (b, p, *x.shape[2:])), np.broadcast_to(y, (b, p, *y.shape[2:]))
    return np.stack([np.stack([nx.matmul(xs[i, j], ys[i, j]) for j in range(p)]) for i in range(b)])


def bits(a: np.ndarray) -> np.ndarray:
    return a.view(np.uint32)


def low(a: np.ndarray) -> np.ndarray:
    """(b, p, ...) tiles with the stack's third axis (`task % split`, here of one)."""
    return a[:, :, None]


@pytest.mark.parametrize(
    ("xs", "ys"),
    [
        ((40, 1, 16, 512), (1, 6, 512, 64)),  # sk03_standard at unroll [1]: a row per body, a weight per task
        ((9, 5, 16, 256), (1, 1, 256, 32)),  # one weight for every task
        ((7, 6, 8, 128), (7, 1, 128, 16)),  # a weight per body, rows per task
    ],
)
def test_a_packed_product_is_each_tiles_product_alone(xs, ys) -> None:
    rng = np.random.default_rng(sum(xs))
    x, y = tiles(rng, xs, 1), rng.standard_normal(ys).astype(BF16)
    m, k, n = xs[2], xs[3], ys[3]
    if not stacked_mm.rows_free(m, k, n):
        pytest.skip("this BLAS rounds a row by where it sits in a call of this shape")
    packed = stacked_mm._packed(x, y)
    assert packed is not None  # (mostly zero rows: packed)
    assert np.array_equal(bits(packed), bits(alone(x, y)))
    assert not bits(packed)[..., 1:, :].any()  # zero rows, negative or not, give +0


def test_a_product_with_most_rows_live_or_a_right_operand_not_finite_is_not_packed() -> None:
    rng = np.random.default_rng(0)
    x, y = tiles(rng, (8, 1, 16, 64), 16), rng.standard_normal((1, 4, 64, 32)).astype(BF16)
    assert stacked_mm._packed(x, y) is None  # every row live: no call saved
    x = tiles(rng, (8, 1, 16, 64), 1)
    y[0, 2, 5, 7] = np.inf  # a zero row times it is NaN, not +0
    assert stacked_mm._packed(x, y) is None
    with np.errstate(invalid="ignore"):
        got, want = stacked_mm.product(low(x), low(y))[0], alone(x, y)
    assert np.array_equal(bits(got[:, :, 0]), bits(want))


def test_a_shape_whose_rows_move_is_not_packed(monkeypatch) -> None:
    rng = np.random.default_rng(1)
    x, y = tiles(rng, (8, 1, 16, 64), 1), rng.standard_normal((1, 4, 64, 32)).astype(BF16)
    monkeypatch.setattr(stacked_mm, "rows_free", lambda m, k, n: False)
    assert stacked_mm._packed(x, y) is None
    assert np.array_equal(bits(stacked_mm.product(low(x), low(y))[0][:, :, 0]), bits(alone(x, y)))


def test_the_probe_sees_a_row_that_moves(monkeypatch) -> None:
    """`rows_free` is False for a product whose row bits depend on the row's place
    (a stand-in for BLAS that adds one to the first row of each call)."""
    stacked_mm.rows_free.cache_clear()
    real = np.matmul

    def placed(a, b):
        out = real(a, b)
        out[..., 0, :] += 1
        return out

    monkeypatch.setattr(stacked_mm, "_product", placed)
    try:
        assert not stacked_mm.rows_free(4, 8, 4)
    finally:
        stacked_mm.rows_free.cache_clear()


def test_a_slot_takes_a_whole_new_product_and_accumulates_in_place() -> None:
    slot = stacked.Slot((2, 3), np.dtype(np.float32))
    data = np.ones((4, 1, 1, 2, 3), np.float32)
    slot.write((), data, (4, 1, 1), own=True)
    assert slot.arr is data and slot.full
    other = np.ones((1, 1, 1, 2, 3), np.float32)  # a smaller stack: broadcast into the slot's
    slot.write((), other, (1, 1, 1), own=True)
    assert slot.arr is not other and slot.arr.shape == (4, 1, 1, 2, 3)
    st = stacked.Stack.__new__(stacked.Stack)
    a, b = stacked.Slot((2, 4), np.dtype(BF16)), stacked.Slot((4, 3), np.dtype(BF16))
    a.write((), np.full((4, 1, 1, 2, 4), 0.5, BF16), (4, 1, 1))
    b.write((), np.full((1, 1, 1, 4, 3), 0.25, BF16), (1, 1, 1))
    before = slot.arr
    st.mmad(a, b, slot, True)
    assert np.array_equal(slot.arr, np.full((4, 1, 1, 2, 3), 1.5, np.float32))
    assert slot.arr is before  # (the slot's own array, summed into: no new array per K step)
    slot.write((), np.ones((4, 1, 1, 2, 3), np.float32), (4, 1, 1), borrow=True)
    borrowed = slot.arr
    st.mmad(a, b, slot, True)  # (a borrowed array is not written over: a new one)
    assert np.array_equal(slot.arr, np.full((4, 1, 1, 2, 3), 1.5, np.float32))
    assert slot.arr is not borrowed and np.array_equal(borrowed, np.ones((4, 1, 1, 2, 3), np.float32))


def test_a_tail_tiles_zero_rows_are_known_and_not_written_again() -> None:
    """`Slot.write_rows`: a tile of whole rows to the slot's end keeps its zero rows
    known (`zero_from`); rows known zero are not written again, rows that were not are
    zeroed, and a copy or a product reads only the rows that may be nonzero."""
    slot = stacked.Slot((4, 3), np.dtype(np.float32))
    slot.write_rows([0, 0], np.full((2, 1, 1, 3, 3), 7, np.float32), (4, 3))
    assert slot.zero_from == 3 and slot.full and slot.live(()) == 3
    assert np.array_equal(slot.arr[:, :, :, 3], np.zeros((2, 1, 1, 3)))
    slot.arr[:, :, :, 3] = 5  # (a stand-in: rows known zero are not written again)
    slot.write_rows([0, 0], np.full((2, 1, 1, 1, 3), 8, np.float32), (4, 3))
    assert slot.zero_from == 1
    assert np.array_equal(slot.arr[0, 0, 0], [[8] * 3, [0] * 3, [0] * 3, [5] * 3])
    slot.write((slice(2, 3), slice(0, 3)), np.ones((1, 1, 1, 1, 3), np.float32), (1, 1, 1))
    assert slot.zero_from == 3 and slot.live((slice(1, 4), slice(0, 3))) == 2
    part = stacked.Slot((4, 3), np.dtype(np.float32))  # not whole rows: written as a padded tile
    part.write_rows([0, 1], np.full((1, 1, 1, 1, 2), 9, np.float32), (4, 2))
    assert part.zero_from == 4 and np.array_equal(part.arr[0, 0, 0, :, 1:], [[9, 9], [0, 0], [0, 0], [0, 0]])


def test_a_product_reads_only_the_rows_that_may_be_nonzero() -> None:
    rng = np.random.default_rng(2)
    x, y = tiles(rng, (40, 1, 16, 512), 1), rng.standard_normal((1, 6, 512, 64)).astype(BF16)
    if not stacked_mm.rows_free(16, 512, 64):
        pytest.skip("this BLAS rounds a row by where it sits in a call of this shape")
    x[:, :, 1:] = np.nan  # (rows the slot knows are zeros: never read)
    got, zero = stacked_mm.product(low(x), low(y), 1)
    assert zero == 1
    x[:, :, 1:] = 0
    assert np.array_equal(bits(got[:, :, 0]), bits(alone(x, y)))


def test_a_new_vector_result_or_gathered_tile_is_taken_not_copied() -> None:
    """A vector op's result that is a new array becomes the slot's (an identity's, which
    is its source's array, does not); so does a load's gathered copy of whole tiles."""
    st = stacked.Stack(stacked.Tracker([], {0: set()}), 0, 3, 1)
    src, dst = stacked.Slot((2, 4), np.dtype(np.float32)), stacked.Slot((2, 4), np.dtype(np.float32))
    src.write((), np.ones((3, 1, 1, 2, 4), np.float32), (3, 1, 1))
    made: list[np.ndarray] = []

    def twice(_, x):
        made.append(x * 2)
        return made[-1]

    st.vector(twice, False, [src], dst)
    assert dst.arr is made[0]
    st.vector(lambda _, x: x, False, [src], dst)  # (the source's own array: copied)
    assert dst.arr is not src.arr and np.array_equal(dst.arr, src.arr)
    tile = np.arange(3 * 2 * 4, dtype=np.float32).reshape(3, 1, 1, 2, 4)
    dst.write_rows([0, 0], tile, (2, 4), own=True)
    assert dst.arr is tile


@pytest.mark.parametrize("dup", [False, True])
def test_a_gather_slices_each_distinct_tile_once_in_task_order(monkeypatch, dup: bool) -> None:
    rng = np.random.default_rng(3)
    a = rng.standard_normal((20, 24)).astype(np.float32)
    st = stacked.Stack(stacked.Tracker([], {0: set()}), 0, 3, 4)
    offs = [st.body * 5 + (0 if dup else st.task // 2), (st.task % 2) * 8]
    monkeypatch.setattr(stacked.np, "unique", lambda *a, **k: pytest.fail("sorted"))
    got = st._tiles(a, offs, (4, 6), (3, 4, 1), gather=True)
    assert got is not None and not np.shares_memory(got, a)
    for i in range(3):
        for j in range(4):
            r, c = (int(np.broadcast_to(o, (3, 4, 1))[i, j, 0]) for o in offs)
            assert np.array_equal(got[i, j, 0], a[r : r + 4, c : c + 6])


def test_a_load_whose_tasks_read_their_rows_whole_is_not_masked(monkeypatch) -> None:
    a = np.arange(14 * 24, dtype=np.float32).reshape(14, 24)
    x = GmTensor("x", a, 0)
    st = stacked.Stack(stacked.Tracker([x], {0: set()}), 0, 3, 4)
    monkeypatch.setattr(stacked.np, "where", lambda *a, **k: pytest.fail("masked"))
    got = st.load(x, [st.body * 4, st.task * 6], (4, 6), np.array([[[3]], [[3]], [[3]]]))
    assert got.shape == (3, 4, 1, 3, 6) and np.array_equal(got[1, 2, 0], a[4:7, 12:18])


def test_an_accumulating_product_adds_only_the_rows_that_may_be_nonzero(monkeypatch) -> None:
    """Rows +0 in the product and in the accumulator stay +0: only the rows before both
    are added, and the accumulator keeps knowing its zero rows."""
    rng = np.random.default_rng(4)
    if not stacked_mm.rows_free(16, 512, 64):
        pytest.skip("this BLAS rounds a row by where it sits in a call of this shape")
    st = stacked.Stack(stacked.Tracker([], {0: set()}), 0, 40, 6)
    a, b = stacked.Slot((16, 512), np.dtype(BF16)), stacked.Slot((512, 64), np.dtype(BF16))
    c = stacked.Slot((16, 64), np.dtype(np.float32))
    a.write_rows([0, 0], rng.standard_normal((40, 1, 1, 1, 512)).astype(BF16), (16, 512))
    b.write((), rng.standard_normal((1, 6, 1, 512, 64)).astype(BF16), (1, 6, 1))
    st.mmad(a, b, c, False)
    assert c.zero_from == 1
    first = c.arr.copy()
    a.write_rows([0, 0], rng.standard_normal((40, 1, 1, 2, 512)).astype(BF16), (16, 512))
    added: list[tuple] = []
    real = np.add

    def add(p, q, out=None):
        added.append(p.shape)
        return real(p, q, out=out)

    monkeypatch.setattr(stacked.np, "add", add)
    st.mmad(a, b, c, True)
    monkeypatch.undo()
    assert added == [(40, 6, 1, 2, 64)] and c.zero_from == 2
    want = first[:, :, 0] + alone(a.arr[:, :, 0], b.arr[:, :, 0])
    assert np.array_equal(bits(c.arr[:, :, 0]), bits(want))
    assert not bits(c.arr)[:, :, :, 2:].any()


@pytest.mark.parametrize("name", ["sk03_standard.mlir", "hc_pre.mlir"])
def test_a_token_tails_products_are_packed_and_the_runs_agree(monkeypatch, name: str) -> None:
    """At unroll [1] (a row per body) the stacked pass packs its products' live rows
    and skips the zero rows its slots know of; outputs, reports and traces stay the
    interp engine's."""
    from kernels import lowered_example
    from test_engine import same

    from pto.interp.run import random_inputs, run, signature

    packed = []
    real = stacked_mm._packed

    def counted(x, y, live_rows=None, rows_only=False):
        out = real(x, y, live_rows, rows_only)
        packed.append((out is not None, live_rows))
        return out

    monkeypatch.setattr(stacked_mm, "_packed", counted)
    pto_m, npu_m = lowered_example(name, "pto-sk03-pipeline{factors=1}")
    inputs = random_inputs(signature(pto_m), 37, 5)
    ref = run(npu_m, inputs, trace=True, engine="interp")
    got = run(npu_m.clone(), inputs, trace=True, engine="compiled")  # (its first run is stacked)
    same(ref, got)
    assert packed and all(p for p, _ in packed) and all(z is not None and z < 16 for _, z in packed)


def test_an_int32_accumulator_wraps_as_each_task_does() -> None:
    """A stacked int8 product added into int32 accumulators near the top wraps mod 2^32,
    as the per-task engine's `np.add(c, prod, out=c)` does, whatever array it is made in."""
    st = stacked.Stack.__new__(stacked.Stack)
    a, b = stacked.Slot((2, 256), np.dtype(np.int8)), stacked.Slot((256, 3), np.dtype(np.int8))
    a.write((), np.full((4, 1, 1, 2, 256), 127, np.int8), (4, 1, 1))
    b.write((), np.full((1, 1, 1, 256, 3), 127, np.int8), (1, 1, 1))
    c = stacked.Slot((2, 3), np.dtype(np.int32))
    start = np.arange(4, dtype=np.int32).reshape(4, 1, 1, 1, 1) + np.int32(2**31 - 8)
    c.write((), np.broadcast_to(start, (4, 1, 1, 2, 3)).copy(), (4, 1, 1), own=True)
    st.mmad(a, b, c, True)
    want = np.array([(2**31 - 8 + i + 256 * 127 * 127) % 2**32 - 2**32 for i in range(4)], np.int64)
    assert c.arr.dtype == np.int32 and c.arr.shape == (4, 1, 1, 2, 3)
    assert np.array_equal(c.arr.astype(np.int64), np.broadcast_to(want.reshape(4, 1, 1, 1, 1), (4, 1, 1, 2, 3)))


def test_a_write_of_whole_rows_by_columns_leaves_no_row_known_zero() -> None:
    """A window whose rows are `slice(None)` (`npu.vcopy`'s columns) covers every row."""
    slot = stacked.Slot((4, 3), np.dtype(np.float32))
    slot.write_rows([0, 0], np.ones((1, 1, 1, 1, 3), np.float32), (4, 3))
    slot.write((slice(None), slice(1, 2)), np.ones((1, 1, 1, 4, 1), np.float32), (1, 1, 1))
    assert slot.zero_from == 4 and slot.live((slice(None), slice(0, 3))) == 4


@pytest.mark.parametrize(
    ("xs", "ys"),
    [
        ((4, 1, 128, 256), (1, 16, 256, 64)),  # sk03_standard at t=512: weight tiles as columns of one call
        ((4, 8, 32, 256), (1, 8, 256, 128)),  # mla_wkv_rmsnorm: a call per task, the bodies' tiles as rows
        ((3, 1, 32, 64), (3, 5, 64, 32)),  # a call per body
    ],
)
def test_a_merged_product_is_each_tiles_product_alone(xs, ys) -> None:
    rng = np.random.default_rng(sum(xs))
    x, y = rng.standard_normal(xs).astype(BF16), rng.standard_normal(ys).astype(BF16)
    calls: list[tuple] = []

    def counted(a, b):
        calls.append(a.shape)
        return np.matmul(a, b)

    got = stacked_mm._merged(low(x), low(y))
    if got is None:
        pytest.skip("this BLAS rounds a merged call of this shape otherwise")
    assert np.array_equal(bits(got[:, :, 0]), bits(alone(x, y)))
    stacked_mm.merges_exact.cache_clear()
    real = stacked_mm._product
    stacked_mm._product = counted
    try:
        stacked_mm._merged(low(x), low(y))
    finally:
        stacked_mm._product = real
        stacked_mm.merges_exact.cache_clear()
    two_d = calls[-1][0] if len(calls[-1]) == 3 else 1  # (the merged call: a 2-D product per batch entry)
    assert two_d < max(xs[0], ys[0]) * max(xs[1], ys[1])


def test_a_merged_product_that_is_not_finite_or_not_exact_is_multiplied_per_tile(monkeypatch) -> None:
    rng = np.random.default_rng(5)
    x, y = rng.standard_normal((4, 1, 32, 64)).astype(BF16), rng.standard_normal((1, 3, 64, 32)).astype(BF16)
    y[0, 1, 3, 4] = np.inf
    assert stacked_mm._merged(low(x), low(y)) is None
    with np.errstate(invalid="ignore"):
        assert np.array_equal(bits(stacked_mm.product(low(x), low(y))[0][:, :, 0]), bits(alone(x, y)))
    y[0, 1, 3, 4] = 1
    monkeypatch.setattr(stacked_mm, "merges_exact", lambda *shape: False)
    assert stacked_mm._merged(low(x), low(y)) is None


def test_the_merge_probe_sees_a_block_that_rounds_otherwise(monkeypatch) -> None:
    """`merges_exact` is False where a merged call's bits differ from the tiles' own (a
    stand-in for BLAS that adds one to the first row of a call taller than a tile)."""
    stacked_mm.merges_exact.cache_clear()
    real = np.matmul

    def placed(a, b):
        out = real(a, b)
        if a.shape[-2] > 4:
            out[..., 0, :] += 1
        return out

    monkeypatch.setattr(stacked_mm, "_product", placed)
    try:
        assert not stacked_mm.merges_exact(4, 8, 4, 2, 1)
        assert stacked_mm.merges_exact(4, 8, 4, 1, 2)
    finally:
        stacked_mm.merges_exact.cache_clear()


def test_the_merge_probe_multiplies_no_tile_of_zeros_only(monkeypatch) -> None:
    """Every tile of the probe's left operand has a nonzero row, however few its rows
    (with two rows, the fixed seed once made both zeros: a probe that cannot fail)."""
    stacked_mm.merges_exact.cache_clear()
    seen = []
    real = np.matmul

    def product(a, b):
        seen.append(a.copy())
        return real(a, b)

    monkeypatch.setattr(stacked_mm, "_product", product)
    try:
        for m in (1, 2, 3, 16):
            seen.clear()
            stacked_mm.merges_exact(m, 32, 33, 4, 2)
            merged = seen[0]  # (the merged call first, then one per block)
            assert merged.shape[0] == 4 * m and all(merged[i : i + m].any() for i in range(0, 4 * m, m)), m
    finally:
        stacked_mm.merges_exact.cache_clear()


def test_a_widened_vector_result_is_taken_not_copied() -> None:
    """A bf16 -> f32 cast's result is a view of its new widened bits (`nx.f32`): it is
    taken whole (hc_pre's cast of a 16 MB stack was copied); a view of part of an array,
    or of an operand, is not."""
    st = stacked.Stack(stacked.Tracker([], {0: set()}), 0, 3, 1)
    src, dst = stacked.Slot((2, 4), np.dtype(BF16)), stacked.Slot((2, 4), np.dtype(np.float32))
    src.write((), np.ones((3, 1, 1, 2, 4), BF16), (3, 1, 1))
    made: list[np.ndarray] = []

    def widen(_, x):
        made.append(nx.f32(x))
        return made[-1]

    st.vector(widen, False, [src], dst)
    assert dst.arr is made[0] and not made[0].flags.owndata
    big = np.zeros((3, 1, 1, 4, 4), np.float32)
    st.vector(lambda _, x: big[:, :, :, :2], False, [src], dst)  # (a part of another array: copied)
    assert not np.shares_memory(dst.arr, big)


def test_a_whole_gm_load_is_borrowed_and_copied_before_it_is_written() -> None:
    """A load of whole tiles takes the tensor's view (no copy: the group does not write
    the tensor); a later write into the slot copies it first, the tensor unchanged."""
    a = np.arange(8 * 6, dtype=np.float32).reshape(8, 6)
    x = GmTensor("x", a, 0)
    st = stacked.Stack(stacked.Tracker([x], {0: set()}), 0, 2, 1)
    slot = stacked.Slot((4, 6), np.dtype(np.float32))
    spec = type("Spec", (), {"ext": (4, 6), "transpose": False})()
    st.dma(spec, x, slot, [st.body * 4, 0], [0, 0], None)
    assert slot.borrowed and np.shares_memory(slot.arr, a)
    slot.write((slice(0, 1), slice(0, 6)), np.zeros((1, 1, 1, 1, 6), np.float32), (1, 1, 1))
    assert not slot.borrowed and not np.shares_memory(slot.arr, a)
    assert np.array_equal(a, np.arange(8 * 6).reshape(8, 6)) and slot.arr[1, 0, 0, 1].tolist() == [
        30,
        31,
        32,
        33,
        34,
        35,
    ]
    assert not slot.arr[:, :, :, 0].any()


def test_a_slot_that_is_two_operands_is_made_contiguous_once(monkeypatch) -> None:
    st = stacked.Stack(stacked.Tracker([], {0: set()}), 0, 3, 1)
    src, dst = stacked.Slot((2, 4), np.dtype(np.float32)), stacked.Slot((2, 4), np.dtype(np.float32))
    src.write((), np.full((3, 1, 1, 2, 4), 3, np.float32), (3, 1, 1))
    made: list[tuple] = []
    real = np.ascontiguousarray

    def contiguous(a, *k):
        made.append(a.shape)
        return real(a, *k)

    monkeypatch.setattr(stacked.np, "ascontiguousarray", contiguous)
    st.vector(lambda _, x, y: x * y, False, [src, src], dst)
    assert len(made) == 1 and (dst.arr == 9).all()


def test_a_transposed_gm_load_stacks_as_the_per_task_copy() -> None:
    """A transposed GM load reads the tile (its valid rows are the GM tile's columns)
    and writes its transpose, rows past the valid ones zero."""
    a = np.arange(6 * 16, dtype=np.float32).reshape(6, 16)
    x = GmTensor("x", a, 0)
    st = stacked.Stack(stacked.Tracker([x], {0: set()}), 0, 2, 1)
    slot = stacked.Slot((8, 3), np.dtype(np.float32))
    spec = type("Spec", (), {"ext": (8, 3), "transpose": True})()
    st.dma(spec, x, slot, [0, st.body * 8], [0, 0], 5)
    for b in range(2):
        want = np.zeros((8, 3), np.float32)
        want[:5] = a[0:3, b * 8 : b * 8 + 5].T
        assert np.array_equal(slot.arr[b, 0, 0], want)


def test_an_int8_product_merges_exactly_with_no_probe(monkeypatch) -> None:
    rng = np.random.default_rng(7)
    x = rng.integers(-128, 128, (3, 1, 1, 8, 256)).astype(np.int8)
    y = rng.integers(-128, 128, (1, 4, 1, 256, 16)).astype(np.int8)
    x[0, 0, 0, 0] = -128
    monkeypatch.setattr(stacked_mm, "merges_exact", lambda *shape: pytest.fail("probed"))
    got = stacked_mm._merged(x, y)
    assert got is not None and got.dtype == np.int32
    assert np.array_equal(got[:, :, 0], alone(x[:, :, 0], y[:, :, 0]))
    big = rng.integers(-128, 128, (3, 1, 1, 8, 1100)).astype(np.int8)  # (past float32's exact K)
    assert stacked_mm._merged(big, rng.integers(-128, 128, (1, 4, 1, 1100, 16)).astype(np.int8)) is None
