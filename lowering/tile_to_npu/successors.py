"""How many tasks each task of a loop body hands on to (`npu.tasks ... succ`): PyPTO's
AICPU schedulers resolve every successor of a task when it ends, at a cost per
successor (docs/model.md, "Dispatch"), so the count is part of the task graph.

A group after another group needs, in general, every task of its producers' body (all
to all: each producer task has all of its tasks as successors, or the one HUB task for
a `hub` group). A split-K run reads only its K range (the column tiles of a chunked
vector phase in it) and a sum task only its output tile's partial sums: there the
successors are the tasks whose footprints (rows x columns of the data) overlap.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import ArrayAttr, IntegerAttr, i64

from pto.dialects import npu

Rect = tuple[range, range]  # rows of the body, columns of the data
Footprints = list[list[Rect]]  # per task of the body


def _split(n: int, size: int, i: int) -> range:
    return range(i * size, min(n, (i + 1) * size)) if n else range(i * size, (i + 1) * size)


def vector_writes(rows: int, r: int, merge: int, chunks: int, width: int, starts: Sequence[int] = (0,)) -> Footprints:
    """A vector phase's tasks: `merge` tiles each, tile j = row tile j div chunks and
    column chunk j mod chunks of a `width`-column row; the row is each of the `width`
    columns at `starts` of another value (the column slices the phase reads of it)."""
    tiles = -(-rows // r) * chunks
    cw = width // chunks
    out: Footprints = []
    for i in range(-(-tiles // merge)):
        rects = []
        for j in range(i * merge, min(tiles, (i + 1) * merge)):
            rt, ch = divmod(j, chunks)
            rects += [(_split(rows, r, rt), range(s + ch * cw, s + (ch + 1) * cw)) for s in starts]
        out.append(rects)
    return out


def cube_tasks(cs, reads: bool) -> Footprints:
    """A cube stage's tasks (`CubeStage`): each unit's rows by its K range (`reads`) or
    by its output columns."""
    t, rows = cs.t, cs.body.rows
    count = cs.units * t.splits
    span = t.span
    out: Footprints = []
    for c in range(-(-count // cs.per_task)):
        rects = []
        for u in range(c * cs.per_task, min(count, (c + 1) * cs.per_task)):
            si, rest = divmod(u, cs.units)
            ni, mg = cs.place(rest)
            rws = range(mg * cs.g * t.m1, min(rows, (mg + 1) * cs.g * t.m1))
            cols = range(si * span, min(t.k, (si + 1) * span)) if reads else range(ni * t.n1, min(t.n, (ni + 1) * t.n1))
            rects.append((rws, cols))
        out.append(rects)
    return out


def sum_reads(rows: int, r: int, n1: int, col_tiles: int) -> Footprints:
    """The split-K sum group's tasks: output tile i div col_tiles of r rows, i mod
    col_tiles of n1 columns."""
    return [
        [(_split(rows, r, i // col_tiles), range((i % col_tiles) * n1, (i % col_tiles + 1) * n1))]
        for i in range(-(-rows // r) * col_tiles)
    ]


def _meets(a: Sequence[Rect], b: Sequence[Rect]) -> bool:
    return any(
        x[0].start < y[0].stop and y[0].start < x[0].stop and x[1].start < y[1].stop and y[1].start < x[1].stop
        for x in a
        for y in b
    )


def overlaps(producers: Footprints, consumers: Footprints) -> list[int]:
    """Per producer task, the consumer tasks whose footprint meets its own."""
    return [sum(_meets(p, c) for c in consumers) for p in producers]


def needs(producers: Footprints, consumers: Footprints) -> list[list[int]]:
    """Per consumer task, the producer tasks whose footprint meets its own."""
    return [[i for i, p in enumerate(producers) if _meets(p, c)] for c in consumers]


def record_needs(groups: Sequence[npu.TasksOp], pairs: dict[tuple[str, str], list[list[int]]]) -> None:
    """Set `needs` on the consumer of each (producer, consumer) pair that is not all to all."""
    by_label = {g.label.data: g for g in groups}
    for (producer, consumer), lists in pairs.items():
        if all(n == list(range(by_label[producer].per_body.value.data)) for n in lists):
            continue  # (all to all after all: the whole body)
        by_label[consumer].needs = ArrayAttr([ArrayAttr([IntegerAttr(j, i64) for j in n]) for n in lists])


def record(groups: Sequence[npu.TasksOp], partial: dict[tuple[str, str], list[int]]) -> None:
    """Set `succ` on the groups of one loop: per task, its successors in every group
    after it (`partial` gives the counts of a (producer, consumer) pair that is not all
    to all)."""
    by_label = {g.label.data: g for g in groups}
    for g in groups:
        n = g.per_body.value.data
        counts = [0] * n
        for d in groups:
            if g.label.data not in d.deps():
                continue
            if d.hub is not None:
                each = [1] * n
            else:
                each = partial.get((g.label.data, d.label.data), [d.per_body.value.data] * n)
            counts = [a + b for a, b in zip(counts, each, strict=True)]
        assert all(lbl in by_label for lbl in g.deps())
        g.succ = ArrayAttr([IntegerAttr(c, i64) for c in (counts if len(set(counts)) > 1 else counts[:1])])


def hub_places(producers: Footprints, consumers: Footprints) -> list[int]:
    """Per consumer task, its place among the consumers that need the same producer tasks
    (PyPTO puts one HUB in front of each such block and hands on its successors in order)."""
    seen: dict[frozenset[int], int] = {}
    places = []
    for c in consumers:
        key = frozenset(i for i, p in enumerate(producers) if _meets(p, c))
        places.append(seen.get(key, 0))
        seen[key] = places[-1] + 1
    return places
