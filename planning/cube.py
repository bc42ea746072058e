"""The cube side's shared rules: fractal padding, the M tile of a body, the row tiles
one unit of a cube task covers (`l1_reuse`), and the tiles tile-assign-shapes chooses
(pto-tune's estimate uses the same)."""

from __future__ import annotations

from pto.dialects.common import CubeTileAttr
from pto.targets import Target

# Cube tile policy (the seed's SK03.md settings, not hardware limits): L0 tiles at most
# 128 rows (M) and 256 columns (N), as its standard `m = [128, 128]`, `n = [256, 256]`;
# N is halved, not below 64, while the tasks would leave over a fifth of the cube cores idle.
M_L0_MAX = 128
N_L0_MAX = 256
N_L0_MIN_SPLIT = 64
CORE_SHARE = 0.8
# kL0 candidates, largest first: SK03.md's largest K tile (512) halved down to one fractal.
K_L0 = (512, 256, 128, 64, 32, 16)
# kL1 = kL0 times the first of these whose L1 tiles fit (SK03.md's k = [256, 1024] is 4x).
K_L1_TIMES = (4, 2)
# L1 copies of each operand to leave room for when choosing kL1, in case tile-to-npu is
# asked for two (l1-buffers=2). The check asks only for one.
BUFFERS = 2
# The mhc_pre variant's tiles by the body's token rows (the seed's hc_pre settings):
# (rows up to, m, k, n, split-K); bodies taller than the last entry use the last.
MHC_TILES = (
    (32, [16, 16], [512, 1024], [128, 128], False),
    (64, [16, 16], [512, 1024], [128, 128], True),
    (None, [16, 16], [512, 2048], [128, 128], True),
)


def pad(x: int, fractal: int) -> int:
    """`x` rounded up to whole cube fractals (the target's `cube.fractal`)."""
    return -(-x // fractal) * fractal


def body_m(m: int, rows: int, fractal: int) -> int:
    """An M tile of `m` rows on a body of `rows` tokens: at most the body, fractal-padded
    (PyPTO specialises each body for its factor)."""
    return min(m, pad(rows, fractal))


def clip_to_body(t: CubeTileAttr, rows: int, fractal: int) -> CubeTileAttr:
    """The cube tiles of a body of `rows` tokens: an M tile larger than the body shrinks
    to it (done once, by tile-assign-shapes; tile-to-npu reads the result)."""
    (m0, m1), ax = t.axes["m"], t.axes
    m = body_m(m1, rows, fractal)
    if m1 <= m:
        return t
    m0 = min(m0, m)
    return CubeTileAttr([m0 if m % m0 == 0 else m, m], ax["k"], ax["n"], split_k=t.is_split_k)


def clip_k(k0: int, k1: int, k: int) -> tuple[int, int]:
    """The K tiles (kL0, kL1) a cube task of K columns runs: none wider than K, a kL1
    past K the kL0 steps that hold K (the last one ragged). tile-to-npu cuts them so and
    pto-tune's estimate counts them so."""
    k0 = min(k0, k)
    k1 = min(k1, pad(k, k0))
    return min(k0, k1), k1


def group_size(row_tiles: int, reuse: int) -> int:
    """The row tiles of one unit: the most (a divisor of the body's `row_tiles`, at most
    `reuse`, PyPTO's `cube_l1_reuse_setting`) that share one load of a weight tile."""
    return next(g for g in range(min(reuse, row_tiles), 0, -1) if row_tiles % g == 0)


def mhc_tiles(rows: int) -> CubeTileAttr:
    """The mhc_pre variant's tiles for a body of `rows` tokens (MHC_TILES)."""
    _, m, k, n, split_k = next(e for e in MHC_TILES if e[0] is None or rows <= e[0])
    return CubeTileAttr(m, k, n, split_k=split_k)


def choose(
    m: int, k: int, n: int, in_bytes: int, acc_bytes: int, nbuf: int, a_cp: int, w_cp: int, target: Target
) -> CubeTileAttr:
    """tile-assign-shapes' cube tiles for an M x K x N matmul (docs/passes.md): N halved
    while the cores lack tasks or L0C overflows, the largest kL0 that fits L0A/L0B, kL1
    a multiple of it that fits `a_cp` + `w_cp` L1 copies."""
    fr = target.cube.fractal
    m0 = min(M_L0_MAX, pad(m, fr))
    n0 = min(N_L0_MAX, pad(n, fr))
    tasks = lambda n0: -(-m // m0) * -(-n // n0)  # noqa: E731
    # (halves kept whole fractals: N = 200 is 208, 112, 64 columns, the last tile ragged)
    while n0 > N_L0_MIN_SPLIT and tasks(n0) < CORE_SHARE * target.cube_cores:
        n0 = pad(n0 // 2, fr)
    while pad(m0, fr) * pad(n0, fr) * acc_bytes * nbuf > target.capacity("l0c") and n0 > fr:
        n0 = pad(n0 // 2, fr)
    k0 = next(
        (
            c
            for c in K_L0
            if c <= max(fr, pad(k, fr))
            and pad(m0, fr) * c * in_bytes * nbuf <= target.capacity("l0a")
            and pad(n0, fr) * c * in_bytes * nbuf <= target.capacity("l0b")
            and c * in_bytes % target.block_bytes == 0
        ),
        K_L0[-1],
    )
    k1 = k0
    for mult in K_L1_TIMES:
        cand = k0 * mult
        l1_rows = a_cp * pad(m0, fr) + w_cp * pad(n0, fr)
        if cand <= pad(k, fr) and l1_rows * cand * in_bytes <= target.capacity("l1"):
            k1 = cand
            break
    return CubeTileAttr([m0, m0], [k0, k1], [n0, n0])


def fit(
    t: CubeTileAttr, k: int, n: int, in_bytes: int, target: Target, acc: str = "f32"
) -> tuple[CubeTileAttr, list[str]]:
    """Pinned tiles that PyPTO runs but this model's cube tasks cannot take as they are
    (PyPTO does not bound its L1 tiles by L1's size), made to fit, with what changed: kL0
    halved while kL0 x nL0 does not fit L0B, then the L1 K tiles halved (on kL0
    multiples) while mL0 x kL1 + nL0 x kL1 does not fit L1; split-K off for an `acc`
    (accumulator) of i32, whose partial sums tile-to-npu does not add (the same numbers:
    i32 sums are exact). A K or N that the tiles do not divide is kept, cut as PyPTO
    cuts it: the last tile holds the rest. Tiles that already fit come back unchanged."""
    fr, ax, said = target.cube.fractal, t.axes, []
    n0, k0 = min(ax["n"][0], n), min(ax["k"][0], k)
    split = t.is_split_k
    if split and acc != "f32":
        said.append(f"split-K off (partial sums of an {acc} accumulator are not modelled; the same numbers)")
        split = False
    k0_was = k0
    while pad(k0, fr) * pad(n0, fr) * in_bytes > target.capacity("l0b") and pad(k0, fr) // 2 >= fr:
        k0 = pad(k0, fr) // 2  # (whole fractals: a kL0 clipped to K = 255 halves to 128)
    if k0 != k0_was:
        said.append(f"kL0 {k0_was} -> {k0} (L0B holds {target.capacity('l0b')} bytes: kL0 x {n0} columns must fit)")
    k1s = [clip_k(k0, v, k)[1] for v in ax["k"][1:]] or [k0]

    def l1(ks: list[int]) -> int:
        return (pad(ax["m"][0], fr) * pad(ks[0], fr) + pad(n0, fr) * pad(ks[-1], fr)) * in_bytes

    before = list(k1s)
    while l1(k1s) > target.capacity("l1") and all(v // 2 >= k0 and (v // 2) % k0 == 0 for v in k1s):
        k1s = [v // 2 for v in k1s]
    if k1s != before:
        said.append(f"kL1 {before[-1]} -> {k1s[-1]} (L1 holds {target.capacity('l1')} bytes)")
    if not said:
        return t, said
    return CubeTileAttr(ax["m"], [k0, *k1s], ax["n"], split_k=split), said
