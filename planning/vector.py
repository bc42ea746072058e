"""The vector phase plan: which vector stages of a loop body fuse into one phase (one
group of vector tasks), the rows of a task's tile, how many tiles one task merges (UB
copies, PyPTO's `vec_nbuffer_setting`), and the column chunk where a row is cut.

`tile-assign-shapes` decides it (`plan`) and records it as `#tile.phase` on the phase's
first stage; `tile-to-npu` emits what it says; pto-tune prunes with `fits`. All three
measure UB with `need`, which places every buffer of one task the way tile-to-npu's
allocator does (`planning.ub.Arena`): by liveness, a value's bytes are reused once its
last reader has run, so the need is the live set at its largest, not the sum."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from xdsl.dialects.builtin import TensorType
from xdsl.ir import Operation, SSAValue

from pto.dialects import tile
from pto.dialects.pto import tensor_type
from pto.planning import columns
from pto.planning.ub import Arena
from pto.planning.ub_ops import column_task, whole_rows_task

# Lowering policy, not a hardware figure: when no column tiling is pinned, chunk widths
# are tried halving from half a row down to this one (the narrowest pinned vector tile
# of the seed's kernels, `(4, 64)`, is column-tiled at 64).
MIN_CHUNK_COLS = 64
# A stage's own tile rows, most first (the seed's `(4, hidden)`, more rows when UB allows).
VEC_ROWS = (8, 4, 2, 1)
# A vector task copy uses two event ids of each pipe pair (loaded/computed, stored:
# lowering/tile_to_npu/events.py).
VEC_EVENTS_PER_COPY = 2


def max_copies(event_ids: int) -> int:
    """Copies of a buffer the flags can tell apart: a vector copy takes
    VEC_EVENTS_PER_COPY ids of a pipe pair, and the cube's `l1b_free` ids start half-way."""
    return event_ids // VEC_EVENTS_PER_COPY


# ---------------------------------------------------------------- the phases of a body


def reads(stages: Sequence[tile.StageBase], producers: Sequence[tile.StageBase]) -> bool:
    """Whether an op in `stages` uses a result of `producers`."""
    made = {r for p in producers for r in p.results}
    return any(v in made for st in stages for o in st.walk() for v in o.operands)


def feeding(pre: list[tile.StageBase], cube: tile.CubeStageOp) -> tuple[list, list]:
    """The vector stages before the cube split into those whose results the cube needs
    (directly or through each other), in order, and the others."""
    feed: list[tile.StageBase] = []
    needers: list[tile.StageBase] = [cube]
    for st in reversed(pre):
        if reads(needers, [st]):
            feed.insert(0, st)
            needers.append(st)
    return feed, [st for st in pre if st not in feed]


def phases(loop: tile.TokenLoopOp) -> list[list[tile.VecStageOp]]:
    """The body's vector phases, each a group of tasks of its own: the stages the cube
    waits for, the stages before the cube it does not wait for, the stages after it."""
    stages = [o for o in loop.body.block.ops if isinstance(o, tile.StageBase)]
    cube = next((o for o in stages if isinstance(o, tile.CubeStageOp)), None)
    if cube is None:
        return [[st for st in stages if isinstance(st, tile.VecStageOp)]]
    at = stages.index(cube)
    feed, side = feeding(stages[:at], cube)
    return [ph for ph in (feed, side, *post_phases(stages[at + 1 :])) if ph]


def post_phases(post: Sequence[tile.StageBase]) -> list[list[tile.VecStageOp]]:
    """The stages after the cube, one phase unless tile-assign-shapes cut it (`cuts`):
    each later part starts at a stage that carries its own plan."""
    out: list[list[tile.VecStageOp]] = []
    for st in post:
        assert isinstance(st, tile.VecStageOp)  # (one cube stage: the stages after it are vector stages)
        if not out or st.phase is not None:
            out.append([])
        out[-1].append(st)
    return out


def per_row(o: tile.ReshapeOp) -> bool:
    """A token tile's columns split into a rank-3 tile (the interleaved RoPE's `[r, D/2, 2]`):
    viewed in UB once its rows are loaded, as vector tasks load rank-2 tiles."""
    t = o.result.type
    return isinstance(t, TensorType) and t.get_num_dims() > 2 and not tile.weight_only(o.result)


def gm_views(stages: Sequence[tile.StageBase]) -> set[Operation]:
    """The ops that are views of global memory, not UB work: a window of a loaded weight,
    an in-place reshape of a loaded tensor (or of such a view), columns of a token tile
    in global memory (`slice_in_gm`)."""
    views: set[Operation] = set()
    for o in (o for st in stages for o in st.body.block.ops):
        if isinstance(o, tile.ViewOp) or isinstance(o, tile.SliceOp) and slice_in_gm(o):
            views.add(o)
        elif (
            isinstance(o, tile.ReshapeOp)
            and (isinstance(o.input.owner, tile.LoadOp) or o.input.owner in views)
            and not per_row(o)
        ):
            views.add(o)
    return views


def slice_in_gm(o: tile.SliceOp) -> bool:
    """Columns of a token tile that is in global memory when a vector stage reads it (a
    loaded tile, a cube stage's result: the cube hands over through GM): its loads read
    the columns (the gate and up halves of one matmul, a head of a projection), as
    PyPTO's views do, rather than the whole rows and a copy of the columns in UB."""
    src = o.input.owner
    in_gm = isinstance(src, tile.LoadOp) and src.row is not None or isinstance(src, tile.CubeStageOp)
    # (a slice its stage yields is the stage's work: a copy of those columns)
    return in_gm and not any(isinstance(u.operation, tile.YieldOp) for u in o.result.uses)


def loop_stages(phase: Sequence[tile.StageBase]) -> list[tile.StageBase]:
    """Every stage of the body the phase is in."""
    block = phase[0].parent_block()
    assert block is not None
    return [o for o in block.ops if isinstance(o, tile.StageBase)]


# ------------------------------------------------------------------------- UB need


@dataclass(frozen=True)
class Need:
    bytes: int  # the task's UB high-water mark, every copy included
    largest: str  # its largest buffer, for messages
    offsets: tuple[int, ...] = ()  # every buffer's offset, in the order tile-to-npu allocates them


def stage_of(op: Operation | None) -> tile.StageBase | None:
    while op is not None and not isinstance(op, tile.StageBase):
        op = op.parent_op()
    return op


def stored(v: SSAValue, phase: Sequence[tile.StageBase]) -> bool:
    """Whether the stage result `v` leaves UB (an output, or read outside the phase):
    tile-to-npu gives it a destination in global memory."""
    return any(isinstance(u.operation, tile.StoreOp) or stage_of(u.operation) not in phase for u in v.uses)


def need(phase: Sequence[tile.VecStageOp], rows: int, copies: int, cols: columns.Plan | None, block: int) -> Need:
    """UB bytes of one task of the phase: `copies` tiles of `rows` rows (each in its own
    space), whole rows or column chunks as `cols` says."""
    arena = Arena(block)
    views = gm_views(loop_stages(phase))
    largest = (0, "")
    for _ in range(copies):
        arena.new_copy()
        if cols is None:
            big = whole_rows_task(phase, views, rows, arena, lambda v: stored(v, phase))
        else:
            big = column_task(cols, rows, arena, lambda v: stored(v, phase))
        largest = max(largest, big)
    return Need(arena.offset, largest[1], tuple(arena.placed))


def part_ops(phase: Sequence[tile.VecStageOp]) -> list[Operation]:
    """The phase's ops in order, the ones a cut may fall between (views and yields are
    not work)."""
    views = gm_views(loop_stages(phase))
    return [o for st in phase for o in st.body.block.ops if o not in views and not isinstance(o, tile.YieldOp)]


def cuts(phase: Sequence[tile.VecStageOp], cap: int, block: int) -> list[int]:
    """Where to cut a phase whose one-row task does not fit UB into parts that each run
    as a phase of their own (PyPTO's tasks of each tile shape, their values passed
    through GM): greedily the longest run of ops from the last cut whose one-row task
    fits; an op that does not fit alone is a part of its own (its phase may still be
    column-tiled). The indices into `part_ops` where each part after the first starts."""
    ops = part_ops(phase)
    views = gm_views(loop_stages(phase))

    def fits(lo: int, hi: int) -> bool:
        arena = Arena(block)
        arena.new_copy()
        whole_rows_task(phase, views, 1, arena, lambda v: stored(v, phase), set(ops[lo:hi]))
        return arena.offset <= cap

    out, lo = [], 0
    while lo < len(ops):
        good, bad = lo + 1, len(ops) + 1  # the part [lo, good) is taken even if it does not fit
        while bad - good > 1:  # (the need grows, as a rule, with the part: a binary search)
            mid = (good + bad) // 2
            good, bad = (mid, bad) if fits(lo, mid) else (good, mid)
        if good < len(ops):
            out.append(good)
        lo = good
    return out


# --------------------------------------------------------------------------- planning


@dataclass(frozen=True)
class Choice:
    rows: int
    copies: int
    cols: columns.Plan | None
    need: Need


def data_shape(st: tile.VecStageOp, views: set[Operation]) -> list[int] | None:
    """The shape of a stage's data: the first operand of its first op that is not a view
    or a per-row reshape or transpose (their rows are whole; a rank-3 vector tile's data
    is rank 2), else of its first op; None for a stage without tensor operands."""
    ops = [o for o in st.body.block.ops if o not in views and not isinstance(o, tile.YieldOp) and o.operands]
    data = next((o for o in ops if not isinstance(o, tile.ReshapeOp | tile.TransposeOp)), ops[0] if ops else None)
    if data is None or not isinstance(t := data.operands[0].type, TensorType):
        return None
    return list(t.get_shape())


def data_cols(st: tile.VecStageOp, views: set[Operation]) -> int:
    """The row width of a stage's data (`data_shape`)."""
    shape = data_shape(st, views)
    assert shape is not None
    return shape[-1]


def pinned_columns(phase: Sequence[tile.VecStageOp]) -> tuple[int, int] | None:
    """(row width, chunk) when a stage's vector tile is narrower than its rows."""
    views = gm_views(loop_stages(phase))
    narrow = [
        (data_cols(st, views), int(st.vec_tile.get_values()[-1]))
        for st in phase
        if st.vec_tile is not None and int(st.vec_tile.get_values()[-1]) < data_cols(st, views)
    ]
    if not narrow:
        return None
    return narrow[0][0], min(cw for _, cw in narrow)


def dividing_chunk(k: int, cw: int) -> int | None:
    """The widest chunk of at most `cw` columns that divides a `k`-column row, at least
    MIN_CHUNK_COLS and whole 32-byte blocks of 16-bit data (or None)."""
    return next((w for w in range(cw, MIN_CHUNK_COLS - 1, -1) if k % w == 0 and w % 16 == 0), None)


def widest(phase: Sequence[tile.VecStageOp]) -> int:
    views = gm_views(loop_stages(phase))
    return max(
        (
            tensor_type(v).get_shape()[-1]
            for st in phase
            for o in st.body.block.ops
            if o not in views and not isinstance(o, tile.YieldOp)
            for v in o.results
        ),
        default=1,
    )


def chunk_tasks(cols: columns.Plan | None) -> int:
    """Column chunks that are tasks of their own (an elementwise column-tiled phase)."""
    return cols.k // cols.cw if cols is not None and columns.elementwise(cols) else 1


def candidates(
    phase: Sequence[tile.VecStageOp], body_rows: int, rows: int, copies: int, pinned: columns.Plan | None
) -> Iterator[tuple[int, int, columns.Plan | None]]:
    """(rows, copies, column plan) best first: the chosen rows (column-tiled as pinned)
    with as many copies as asked, then fewer; if no column tiling is pinned, the chosen
    rows column-tiled in halving chunk widths (when the phase allows it); then halving rows."""
    shapes: list[tuple[int, columns.Plan | None]] = [(rows, pinned)]
    if pinned is None:
        k = widest(phase)
        cw = k // 2
        while cw >= MIN_CHUNK_COLS and k % cw == 0:
            cand = columns.plan(phase, gm_views(loop_stages(phase)), k, cw)
            if isinstance(cand, columns.Plan):
                shapes.append((rows, cand))
            cw //= 2
    r = rows
    while r > 1:
        r //= 2
        shapes.append((r, pinned))
    for r, p in shapes:
        tiles = -(-body_rows // r) * chunk_tasks(p)
        for c in range(min(copies, tiles), 0, -1):
            yield r, c, p


def choose(
    phase: Sequence[tile.VecStageOp],
    body_rows: int,
    rows: int,
    copies: int,
    pinned: columns.Plan | None,
    cap: int,
    block: int,
    keep_copies: bool = False,
) -> Choice | Need:
    """The first candidate whose task fits `cap` bytes of UB, or the need of the last
    (smallest) one when none does. With `keep_copies` (the copies were pinned, the rows
    were not), fewer rows with every copy come first."""
    first: list[tuple[int, int, columns.Plan | None]] = []
    r = rows
    while keep_copies and r >= 1:
        first.append((r, min(copies, -(-body_rows // r) * chunk_tasks(pinned)), pinned))
        r //= 2
    last = Need(0, "")
    for r, c, p in [*first, *candidates(phase, body_rows, rows, copies, pinned)]:
        last = need(phase, r, c, p, block)
        if last.bytes <= cap:
            return Choice(r, c, p, last)
    return last
