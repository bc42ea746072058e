"""`pto.pypto`'s manual tails (pypto/tails.py): a pypto.loop of whole tiles then a second
loop over the rows left, and a Python `if` choosing a whole tile or a partial one."""

import pathlib

import numpy as np
import pytest

import pto
import pto.pypto as pypto
from pto.interp.golden import check

K, N, TILE = 64, 32, 8
FP32 = pypto.DT_FP32
COUNTS = [3, 16, 21]  # fewer than a tile, a multiple of it, a remainder
SRC = pathlib.Path(__file__).read_text().splitlines()


def line(marker: str) -> str:
    """`file:line` of the one line of this file that ends with `marker`."""
    (n,) = [i + 1 for i, s in enumerate(SRC) if s.endswith(marker) and not s.lstrip().startswith("def ")]
    return f"{__file__}:{n}:"


def tile(x, w, out, off, rows, valid=None, extra=False):
    xt = pypto.view(x, [rows, K], [off, 0], valid_shape=valid)  # view
    y = pypto.exp(xt) * 2.0
    if extra:
        y = pypto.sqrt(y)
    pypto.assemble(pypto.matmul(y, w, FP32, b_trans=True), [off, 0], out)


def golden(x, w):
    return (np.exp(x) * 2.0) @ w.T


def data(t: int):
    rng = np.random.default_rng(t)
    x = rng.standard_normal((t, K), dtype=np.float32) / 4
    w = rng.standard_normal((N, K), dtype=np.float32) / 8
    return x, w, np.zeros((t, N), np.float32)


def run(k, t: int) -> None:
    x, w, out = data(t)
    k(x, w, out)
    assert check(out, golden(x, w)).ok


# ------------------------------------------------------------------ two loops


def two_loops(start=lambda n: n * TILE, rows=1, valid=False, extra=False):
    @pypto.frontend.jit
    def k(
        x: pypto.Tensor([pypto.DYNAMIC, K], FP32),
        w: pypto.Tensor([N, K], FP32),
        out: pypto.Tensor([pypto.DYNAMIC, N], FP32),
    ):
        t = x.shape[0]
        n = t // TILE
        for i in pypto.loop(n, idx_name="i"):
            tile(x, w, out, i * TILE, TILE)
        for j in pypto.loop(start(n), t, rows, idx_name="j"):  # the second loop
            tile(x, w, out, j, rows, [pypto.min(rows, t - j), K] if valid else None, extra)

    return k


def cascade():
    @pypto.frontend.jit
    def k(
        x: pypto.Tensor([pypto.DYNAMIC, K], FP32),
        w: pypto.Tensor([N, K], FP32),
        out: pypto.Tensor([pypto.DYNAMIC, N], FP32),
    ):
        for idx, p in pypto.loop_unroll(0, x.shape[0], 1, unroll_list=[TILE, 1]):
            tile(x, w, out, idx, p)

    return k


@pytest.mark.parametrize("t", COUNTS)
def test_whole_tiles_then_the_rows_left_run(t: int) -> None:
    run(two_loops(), t)


def test_whole_tiles_then_the_rows_left_are_loop_unrolls_cascade() -> None:
    args = data(5)
    assert str(two_loops().trace(*args)) == str(cascade().trace(*args))
    assert "pto.unroll = array<i64: 8, 1>" in str(cascade().trace(*args))


@pytest.mark.parametrize("t", COUNTS)
def test_a_second_loop_of_partial_tiles_is_a_cascade_with_a_tail(t: int) -> None:
    k = two_loops(rows=4, valid=True)
    run(k, t)
    ir = str(k.trace(*data(t)))
    assert "pto.unroll = array<i64: 8, 4>" in ir and "pto.tail" in ir


@pytest.mark.parametrize(
    "k, message, where",
    [
        (two_loops(start=lambda n: n * TILE + 1), "does not cover the rows the first loop's whole", "# view"),
        (two_loops(start=lambda n: n * TILE - 1), "does not cover the rows the first loop's whole", "# view"),
        (two_loops(rows=4), "does not cover the rows", "# view"),  # no valid_shape: past the tokens
        (two_loops(extra=True), "the second pypto.loop's body differs from the first's", "# the second loop"),
    ],
    ids=["gap", "overlap", "overrun", "other-body"],
)
def test_second_loops_that_are_not_the_rest_are_refused_at_the_users_line(k, message, where) -> None:
    with pytest.raises(pto.BuildError) as e:
        run(k, 21)
    assert message in str(e.value) and line(where) in str(e.value), str(e.value)


def test_whole_tiles_alone_nested_and_third_loops_are_refused() -> None:
    @pypto.frontend.jit
    def alone(x: pypto.Tensor([pypto.DYNAMIC, K], FP32), out: pypto.Tensor([pypto.DYNAMIC, K], FP32)):
        for i in pypto.loop(x.shape[0] // TILE):
            pypto.assemble(pypto.view(x, [TILE, K], [i * TILE, 0]), [i * TILE, 0], out)  # alone

    @pypto.frontend.jit
    def nested(x: pypto.Tensor([pypto.DYNAMIC, K], FP32), out: pypto.Tensor([pypto.DYNAMIC, K], FP32)):
        for i in pypto.loop(x.shape[0] // TILE):
            for j in pypto.loop(i * TILE, i * TILE + TILE, 1):  # nested
                pypto.assemble(pypto.exp(pypto.view(x, [1, K], [j, 0])), [j, 0], out)

    @pypto.frontend.jit
    def after_all(x: pypto.Tensor([pypto.DYNAMIC, K], FP32), out: pypto.Tensor([pypto.DYNAMIC, K], FP32)):
        t = x.shape[0]
        for i in pypto.loop((t + TILE - 1) // TILE):
            xt = pypto.view(x, [TILE, K], [i * TILE, 0], valid_shape=[pypto.min(TILE, t - i * TILE), K])
            pypto.assemble(pypto.exp(xt), [i * TILE, 0], out)
        for j in pypto.loop(t // TILE * TILE, t, 1):  # after all
            pypto.assemble(pypto.exp(pypto.view(x, [1, K], [j, 0])), [j, 0], out)

    x = np.ones((21, K), np.float32)
    for k, message, where in [
        (alone, "are never computed; add a second loop", "# alone"),
        (nested, "a token loop nested in the token loop", "# nested"),
        (after_all, "already covers every row", "# after all"),
    ]:
        with pytest.raises(pto.BuildError) as e:
            k(x, np.zeros_like(x))
        assert message in str(e.value) and line(where) in str(e.value), str(e.value)


# ------------------------------------------------------------------ a Python `if` on the tail


def branching(test=lambda off, t: off + TILE <= t, extra=False):
    @pypto.frontend.jit
    def k(
        x: pypto.Tensor([pypto.DYNAMIC, K], FP32),
        w: pypto.Tensor([N, K], FP32),
        out: pypto.Tensor([pypto.DYNAMIC, N], FP32),
    ):
        t = x.shape[0]
        for i in pypto.loop((t + TILE - 1) // TILE, idx_name="i"):
            off = i * TILE
            if test(off, t):  # the if
                tile(x, w, out, off, TILE)
            else:
                tile(x, w, out, off, TILE, [t - off, K], extra)

    return k


def standard():
    @pypto.frontend.jit
    def k(
        x: pypto.Tensor([pypto.DYNAMIC, K], FP32),
        w: pypto.Tensor([N, K], FP32),
        out: pypto.Tensor([pypto.DYNAMIC, N], FP32),
    ):
        t = x.shape[0]
        for i in pypto.loop((t + TILE - 1) // TILE, idx_name="i"):
            tile(x, w, out, i * TILE, TILE, [pypto.min(TILE, t - i * TILE), K])

    return k


@pytest.mark.parametrize("t", COUNTS)
@pytest.mark.parametrize(
    "test",
    [lambda off, t: off + TILE <= t, lambda off, t: not t - off < TILE, lambda off, t: TILE <= t - off],
    ids=["whole", "not-partial", "flipped"],
)
def test_an_if_on_the_tail_runs(t: int, test) -> None:
    run(branching(test), t)


def test_an_if_on_the_tail_is_the_standard_loop() -> None:
    args = data(5)
    assert str(branching().trace(*args)) == str(standard().trace(*args))


def test_the_builtin_min_of_a_valid_shape_is_a_tail_test() -> None:
    @pypto.frontend.jit
    def k(
        x: pypto.Tensor([pypto.DYNAMIC, K], FP32),
        w: pypto.Tensor([N, K], FP32),
        out: pypto.Tensor([pypto.DYNAMIC, N], FP32),
    ):
        t = x.shape[0]
        for i in pypto.loop((t + TILE - 1) // TILE):
            tile(x, w, out, i * TILE, TILE, [min(TILE, t - i * TILE), K])

    for t in COUNTS:
        run(k, t)


@pytest.mark.parametrize(
    "k, message",
    [
        (branching(lambda off, t: off + TILE < t), "has no value while the kernel is traced"),  # not at a multiple
        (branching(lambda off, t: off < 2 * TILE), "has no value while the kernel is traced"),
        (branching(extra=True), "here its branches differ in its pypto op #3 (sqrt)"),
    ],
    ids=["off-by-one", "not-the-tail", "other-branch"],
)
def test_ifs_that_are_not_the_tail_are_refused_at_the_users_line(k, message) -> None:
    with pytest.raises(pto.BuildError) as e:
        run(k, 21)
    assert message in str(e.value) and "valid_shape=[pypto.min(TILE" in str(e.value), str(e.value)
    assert line("# the if") in str(e.value), str(e.value)


def test_an_if_outside_a_pypto_loop_body_is_refused() -> None:
    @pypto.frontend.jit
    def k(x: pypto.Tensor([pypto.DYNAMIC, K], FP32), out: pypto.Tensor([pypto.DYNAMIC, K], FP32)):
        for idx, p in pypto.loop_unroll(0, x.shape[0], 1, unroll_list=[2]):
            xt = pypto.view(x, [p, K], [idx, 0])
            if idx < 4:  # in loop_unroll
                xt = pypto.exp(xt)
            pypto.assemble(xt, [idx, 0], out)

    x = np.ones((5, K), np.float32)
    with pytest.raises(pto.BuildError) as e:
        k(x, np.zeros_like(x))
    assert "the symbolic integer idx has no value" in str(e.value) and line("# in loop_unroll") in str(e.value)


def test_a_view_past_the_tokens_without_valid_rows_names_the_valid_rows_wanted() -> None:
    """A TILE-row view at each tile with no valid_shape reads past T on the last tile:
    refused, naming the valid rows each tile should have (its offsets alone agree)."""

    @pypto.frontend.jit
    def k(
        x: pypto.Tensor([pypto.DYNAMIC, K], FP32),
        w: pypto.Tensor([N, K], FP32),
        out: pypto.Tensor([pypto.DYNAMIC, N], FP32),
    ):
        t = x.shape[0]
        for i in pypto.loop((t + TILE - 1) // TILE, idx_name="i"):
            tile(x, w, out, i * TILE, TILE)

    with pytest.raises(pto.BuildError) as e:
        run(k, 3)
    assert "at T = 1 it starts at [0] with [8] valid rows, not [0] with [1] valid rows" in str(e.value), str(e.value)
