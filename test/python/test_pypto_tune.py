"""kernel.tune(...) of a pto.pypto jit kernel: the lines to change to apply the winner,
in PyPTO's spelling, at the kernel's lines; apply() writing a copy with them changed;
the kernel's own hints as the winner; a refusal where a hint is computed.

Each kernel is tuned once, over a space of one configuration (so the winner is known)
at small token counts, as test_tune.py keeps its tuner tests small."""

import dataclasses
import importlib.util
import re
import sys

import ml_dtypes
import numpy as np
import pytest

import pto
import pto.pypto as pypto
from pto.interp.run import signature
from pto.tuner.kernel import TuneError
from pto.tuner.space import key

# The kernels, written to a file of their own: the suggestions point at its lines.
KERNELS = """
import pto.pypto as pypto

K, N, TILE = 256, 128, 4
UNROLL = [8, 1]


@pypto.frontend.jit(pass_options={"vec_nbuffer_setting": {0: 2}})
def hinted(
    x: pypto.Tensor([pypto.DYNAMIC, K], pypto.DT_BF16),
    w: pypto.Tensor([N, K], pypto.DT_BF16),
    out: pypto.Tensor([pypto.DYNAMIC, N], pypto.DT_BF16),
):
    w.set_cache_policy(pypto.CachePolicy.NONE_CACHEABLE, True)
    for idx, p in pypto.loop_unroll(0, x.shape[0], 1, unroll_list=[8, 1]):
        pypto.set_vec_tile_shapes(4, K)
        n = pypto.rms_norm(pypto.view(x, [p, K], [idx, 0]), None, 1e-6)
        pypto.set_semantic_label("linear")
        pypto.set_cube_tile_shapes([32, 32], [256, 256], [N // 2, N // 2])
        y = pypto.matmul(n, w, pypto.DT_FP32, b_trans=True)
        pypto.assemble(pypto.cast(y, pypto.DT_BF16), [idx, 0], out)


@pypto.frontend.jit(pass_options={"cube_l1_reuse_setting": {-1: 2}, "vec_nbuffer_setting": {-1: 1}})
def best(
    x: pypto.Tensor([pypto.DYNAMIC, K], pypto.DT_BF16),
    w: pypto.Tensor([N, K], pypto.DT_BF16),
    out: pypto.Tensor([pypto.DYNAMIC, N], pypto.DT_BF16),
):
    w.set_cache_policy(pypto.CachePolicy.NONE_CACHEABLE, True)
    for idx, p in pypto.loop_unroll(0, x.shape[0], 1, unroll_list=[128, 64, 32, 16, 8, 1]):
        pypto.set_vec_tile_shapes(1, 256)
        n = pypto.rms_norm(pypto.view(x, [p, K], [idx, 0]), None, 1e-6)
        pypto.assemble(pypto.matmul(n, w, pypto.DT_BF16, b_trans=True), [idx, 0], out)


@pypto.frontend.jit
def per_factor(
    x: pypto.Tensor([pypto.DYNAMIC, K], pypto.DT_BF16),
    w: pypto.Tensor([N, K], pypto.DT_BF16),
    out: pypto.Tensor([pypto.DYNAMIC, N], pypto.DT_BF16),
):
    for idx, p in pypto.loop_unroll(0, x.shape[0], 1, unroll_list=UNROLL):
        pypto.set_vec_tile_shapes(4 if p >= 8 else 1, 256)
        n = pypto.rms_norm(pypto.view(x, [p, K], [idx, 0]), None, 1e-6)
        pypto.assemble(pypto.matmul(n, w, pypto.DT_BF16, b_trans=True), [idx, 0], out)


@pypto.frontend.jit
def tiled(
    x: pypto.Tensor([pypto.DYNAMIC, K], pypto.DT_BF16),
    w: pypto.Tensor([N, K], pypto.DT_BF16),
    out: pypto.Tensor([pypto.DYNAMIC, N], pypto.DT_BF16),
):
    T = x.shape[0]
    for i in pypto.loop((T + TILE - 1) // TILE):
        off = i * TILE
        xt = pypto.view(x, [TILE, K], [off, 0], valid_shape=[pypto.min(TILE, T - off), K])
        n = pypto.rms_norm(xt, None, 1e-6)
        pypto.assemble(pypto.matmul(n, w, pypto.DT_BF16, b_trans=True), [off, 0], out)
"""

# One configuration that differs from `hinted` in every hint (and beats it).
WINNER = {
    "unroll": [[16, 1]],
    "vec_rows": [2],
    "m": [16],
    "n": [64],
    "k": [[128, 256]],
    "split_k": [False],
    "cache.w": ["normal"],
    "host_transpose": [False],
    "l1_reuse": [1],
    "vec_nbuffer": [1],
    "cube_nbuffer": [1],
}
# The rest as the kernel (or the passes) has it.
AS_IS = {d: ["auto"] for d in ("m", "n", "k", "split_k", "host_transpose", "cube_nbuffer")}


def _load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


def _args(t=1):
    return [np.zeros(s, ml_dtypes.bfloat16) for s in [(t, 256), (128, 256), (t, 128)]]


@pytest.fixture(scope="module")
def kernels(tmp_path_factory):
    path = tmp_path_factory.mktemp("tune_kernels") / "tune_kernels.py"
    path.write_text(KERNELS)
    return _load(path, "pypto_tune_kernels"), path


@pytest.fixture(scope="module")
def hinted(kernels):
    mod, path = kernels
    return mod.hinted.tune(*_args(), tokens=[8, 20], jobs=1, exhaustive=True, dims=WINNER), path


def _line(path, text):
    return next(i for i, x in enumerate(path.read_text().splitlines(), 1) if text in x)


def test_the_winner_s_hints_at_the_kernel_s_lines(hinted):
    r, path = hinted
    assert r.best == {k: v[0] for k, v in WINNER.items()}  # (it beats the kernel's hints and SK03.md's)
    got = {s.hint: s for s in r.suggestions}
    assert {s.file for s in r.suggestions} == {str(path)} and not any(s.manual for s in r.suggestions)
    unroll = got["unroll_list"]
    assert unroll.line == _line(path, "loop_unroll") and unroll.pypto == "unroll_list=[16, 1]"
    assert unroll.new == [unroll.old[0].replace("[8, 1]", "[16, 1]")]
    options = got["pass_options"]
    assert options.line == _line(path, "vec_nbuffer_setting") and options.new == [
        '@pypto.frontend.jit(pass_options={"vec_nbuffer_setting": {-1: 1}, "cube_l1_reuse_setting": {-1: 1}, '
        '"cube_nbuffer_setting": {-1: 1}})'
    ]
    cache = got["cache of w"]
    assert cache.new == ["    w.set_cache_policy(pypto.CachePolicy.NONE_CACHEABLE, False)"]
    cube = got["cube tile of pto.matmul 'linear'"]  # the arguments that stay are kept as written
    assert cube.line == _line(path, "set_cube_tile_shapes([32")
    assert cube.new == ["        pypto.set_cube_tile_shapes([16, 16], [128, 256], [N // 2, N // 2])"]
    # The call sets the output cast's tile too, which the winner keeps: the norm gets one of its own.
    vec = got["vector tile of pto.rms_norm"]
    norm = "        n = pypto.rms_norm(pypto.view(x, [p, K], [idx, 0]), None, 1e-6)"
    assert vec.line == _line(path, norm.strip()) and vec.old == [norm]
    assert vec.new == ["        pypto.set_vec_tile_shapes(2, 256)", norm, "        pypto.set_vec_tile_shapes(4, K)"]
    text = r.suggest()
    assert str(r) == text and f"{path}:{unroll.line}: unroll_list" in text
    assert "'linear' cube tile: pypto.set_cube_tile_shapes([16, 16], [128, 256], [64, 64])\n" in text


def _hints(module):
    """The hints of a pto-level kernel: the function's, its arguments' and its ops'
    (less `pto.host_transpose = false`, which changes nothing and PyPTO does not spell)."""
    f = signature(module).func
    args = [{k: v for k, v in d.data.items() if k != "pto.host_transpose"} for d in f.arg_attrs.data]
    return dict(f.attributes), args, [dict(o.attributes) for o in f.walk() if o is not f]


def test_apply_writes_a_copy_that_runs_as_the_winner(hinted, tmp_path):
    r, path = hinted
    before = path.read_text()
    out = r.apply(tmp_path / "applied.py")
    assert path.read_text() == before  # the kernel's own file is never written
    applied = _load(out, "pypto_tune_applied").hinted
    module = applied.trace(*_args())
    assert _hints(module) == _hints(r.winner)
    lowered = (pto.compile(m).text("tile") for m in (module, r.winner))
    assert next(lowered).split("\n", 2)[2] == next(lowered).split("\n", 2)[2]  # (after the function's line)
    applied(*_args(20))  # (a run measures what the tuner measured for the winner)
    assert applied.report.cycles == r.sweep.results[key(r.best)][1][20]["cycles"]
    with pytest.raises(TuneError, match="is the kernel's own file"):
        r.apply(path)


def test_apply_refuses_a_copy_that_does_not_lower_as_the_winner(hinted, tmp_path):
    r, _ = hinted
    missed = dataclasses.replace(r)  # as if a change the winner needs were not made
    missed.suggestions = [s for s in r.suggestions if not s.hint.startswith("cube tile")]
    (tmp_path / "missed.py").write_text("# a file apply() is asked to replace\n")
    with pytest.raises(
        TuneError, match=r"^the changed copy does not lower as the winner \(at the tile level, `[^\n]*`\)$"
    ):
        missed.apply(tmp_path / "missed.py")
    assert (tmp_path / "missed.py").read_text() == "# a file apply() is asked to replace\n"  # (left as it was)
    assert [p.name for p in tmp_path.iterdir()] == ["missed.py"]


def test_the_kernel_s_own_hints_are_the_winner(kernels):
    mod, _ = kernels
    # one other configuration, with two vector buffers (slower at t = 8, as SK03.md's settings are)
    dims = {**AS_IS, "unroll": [[128, 64, 32, 16, 8, 1]], "vec_rows": [1], "cache.w": ["none_cacheable"]}
    dims |= {"l1_reuse": [2], "vec_nbuffer": [2]}
    r = mod.best.tune(*_args(), tokens=[8], jobs=1, exhaustive=True, dims=dims)
    assert r.best == {} and r.suggestions == []
    text = r.suggest()
    assert "the kernel's own hints are the winner" in text and "nothing to change" in text
    cube = next(x for x in r.resolved if x.what.endswith("cube tile"))
    assert cube.chosen  # the kernel sets no cube tile: the passes chose this one
    m, k, n = re.search(
        r"tiles <m = (\[.*?\]), k = (\[.*?\]), n = (\[.*?\])>", pto.compile(r.module).text("tile")
    ).groups()
    assert cube.value == f"pypto.set_cube_tile_shapes({m}, {k}, {n})" and f"{cube.value} *" in text


def test_hints_the_source_computes_are_suggested_not_applied(kernels, tmp_path):
    mod, path = kernels
    r = mod.per_factor.tune(*_args(), tokens=[8], jobs=1, exhaustive=True, dims=WINNER)
    got = {s.hint: s for s in r.suggestions}
    unroll, vec = got["unroll_list"], got["vector tile of pto.rms_norm"]
    assert (
        unroll.manual
        == f"{path}:{_line(path, 'unroll_list=UNROLL')}: unroll_list is computed (`UNROLL`), not a literal"
    )
    assert "differs by unroll factor" in vec.manual  # (`4 if p >= 8 else 1`)
    assert unroll.edits == vec.edits == () and got["cache of w"].edits
    text = r.suggest()
    assert "by hand, unroll_list: unroll_list=[16, 1]" in text
    assert "by hand, vector tile of pto.rms_norm: pypto.set_vec_tile_shapes(2, 256)" in text
    with pytest.raises(TuneError, match=r"^cannot apply unroll_list mechanically: [^\n]*UNROLL[^\n]*$"):
        r.apply(tmp_path / "refused.py")
    assert not (tmp_path / "refused.py").exists()


def test_the_tile_of_a_pypto_loop_is_its_name_s_value(kernels, tmp_path):
    mod, path = kernels
    dims = {
        **AS_IS,
        "unroll": [[16]],
        "vec_rows": [4],
        "cache.w": ["auto"],
        "l1_reuse": ["auto"],
        "vec_nbuffer": ["auto"],
    }
    r = mod.tiled.tune(*_args(), tokens=[64], jobs=1, exhaustive=True, dims=dims)
    got = {s.hint: s for s in r.suggestions}
    tile = got["the pypto.loop tile"]
    assert tile.line == _line(path, "K, N, TILE = ") and tile.new == ["K, N, TILE = 256, 128, 16"]
    vec = got["vector tile of pto.rms_norm"]  # the kernel sets none: a new line before the op
    assert vec.old == [] and vec.line == _line(path, "n = pypto.rms_norm(xt, None, 1e-6)")
    assert vec.new == ["        pypto.set_vec_tile_shapes(4, 256)"]
    applied = _load(r.apply(tmp_path / "tiled.py"), "pypto_tune_tiled").tiled
    assert "pto.unroll = array<i64: 16>" in str(applied.trace(*_args()))


def test_a_kernel_made_in_a_function_is_not_applied(tmp_path):
    import pto.pypto as pypto

    @pypto.frontend.jit
    def inner(
        x: pypto.Tensor([pypto.DYNAMIC, 256], pypto.DT_BF16),
        w: pypto.Tensor([128, 256], pypto.DT_BF16),
        out: pypto.Tensor([pypto.DYNAMIC, 128], pypto.DT_BF16),
    ):
        for idx, p in pypto.loop_unroll(0, x.shape[0], 1, unroll_list=[8, 1]):
            n = pypto.rms_norm(pypto.view(x, [p, 256], [idx, 0]), None, 1e-6)
            pypto.assemble(pypto.matmul(n, w, pypto.DT_BF16, b_trans=True), [idx, 0], out)

    r = inner.tune(*_args(), tokens=[8], jobs=1, exhaustive=True, dims=WINNER)
    assert r.suggestions and all(s.edits for s in r.suggestions)  # (each change is mechanical)
    with pytest.raises(TuneError, match=r"inner is made in a function: the changed copy cannot be checked$"):
        r.apply(tmp_path / "inner.py")
    assert not list(tmp_path.iterdir())


def test_the_resolved_hints_name_a_weight_stage_s_tile() -> None:
    """A weight stage (W8A16's cast) runs once, before the loops: its tile is one line."""
    from pto.pypto.resolved import resolved_hints

    k2, n2 = 256, 256

    @pypto.frontend.jit
    def w8a16(
        x: pypto.Tensor([pypto.DYNAMIC, k2], pypto.DT_FP16),
        w: pypto.Tensor([k2, n2], pypto.DT_INT8),
        out: pypto.Tensor([pypto.DYNAMIC, n2], pypto.DT_FP32),
    ):
        pypto.set_vec_tile_shapes(64, n2)
        w16 = pypto.cast(w, pypto.DT_FP16)
        for i, p in pypto.loop_unroll(0, x.shape[0], 1, unroll_list=[16]):
            pypto.assemble(pypto.matmul(pypto.view(x, [p, k2], [i, 0]), w16, pypto.DT_FP32), [i, 0], out)

    module = w8a16.trace(np.ones((4, k2), np.float16), np.ones((k2, n2), np.int8), np.zeros((4, n2), np.float32))
    won = module.body.block.first_op
    rows = resolved_hints(pto.compile(module.clone()).tile, won, ("w",), "pypto")
    stage = next(r for r in rows if r.what == "'weight' weight-stage tile")
    assert stage.value == "pypto.set_vec_tile_shapes(64, 256)" and not stage.chosen


BLOCKS = """
import pto.pypto as pypto

K, N = 256, 128


@pypto.frontend.jit
def blocks(
    x: pypto.Tensor([pypto.DYNAMIC, K], pypto.DT_BF16),
    w: pypto.Tensor([N, K], pypto.DT_BF16),
    out: pypto.Tensor([pypto.DYNAMIC, N], pypto.DT_BF16),
):
    t = x.shape[0]
    for b, k in pypto.loop_unroll(pypto.ceildiv(t, 8), unroll_list=[2, 1]):
        rows = pypto.min(k * 8, t - b * 8)
        xt = pypto.view(x, [k * 8, K], [b * 8, 0], valid_shape=[rows, K])
        y = pypto.matmul(pypto.rms_norm(xt, None, 1e-6), w, pypto.DT_BF16, b_trans=True)
        pypto.assemble(y, [b * 8, 0], out)
"""


@pytest.mark.parametrize(("unroll", "said"), [([[32, 8]], "unroll_list=[4, 1]"), ([[12]], None)])
def test_a_loop_unroll_over_blocks_is_suggested_in_blocks(tmp_path, unroll, said):
    """`loop_unroll(ceil(T / 8), unroll_list=[2, 1])` counts 8-row blocks: the winner's
    rows are written back as blocks, or said not to be whole blocks."""
    path = tmp_path / "blocks_kernel.py"
    path.write_text(BLOCKS)
    mod = _load(path, "pypto_tune_blocks")
    r = mod.blocks.tune(*_args(), tokens=[20], jobs=1, exhaustive=True, dims={**WINNER, "unroll": unroll})
    got = {s.hint: s for s in r.suggestions}["unroll_list"]
    if said is not None:
        assert got.pypto == said and got.new == [got.old[0].replace("[2, 1]", "[4, 1]")], got
    else:
        assert got.manual and "are not whole 8-row blocks" in got.manual, got
