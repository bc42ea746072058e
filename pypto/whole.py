"""A kernel written with no loop: its body is one tile of all the tokens.

PyPTO's operator tests and tutorials write static shapes and no loop at all
(`out[:] = pypto.matmul(a, b)`, the performance guide's manual split-K): PyPTO compiles
the whole tensors, tiled by the tile shapes. Here such a body is traced as the one body
of a `pypto.loop(1)` whose token tile is every row: each parameter with the token rows
is seen through its whole-rows view, and a write of a whole output (`out[:] = y`,
`out.move(y)`, `out[0:M, :] = y`, `out[:, a:b] = y`, `assemble(y, [0, 0], out)`) is that
tile's rows of it. A `pypto.loop` of numbers in such a body (over N tiles, or a one-trip
`pypto.loop(1)`) is unrolled in it. The token parameters are those of rank 2 or more
whose rows are as many as the first such parameter's (the activation comes first in
PyPTO's signatures), or failing that as many as another's; the token count is static,
so the kernel is specialised to it, as PyPTO's is to its static shapes.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from pto.frontend.checks import BuildError
from pto.pypto import loops
from pto.pypto.sym import Sym
from pto.pypto.tensor import Loop, Site, Tensor, Trace, current

R = TypeVar("R")


def token_params(shapes: list[list]) -> list[set[int]]:
    """The sets of parameters that may have the token rows in a kernel of static shapes,
    likeliest first: those of rank 2 or more whose rows are as many as the first such
    parameter's (the activation comes first in PyPTO's signatures), then as many as the
    next's, and so on; none if the kernel has a DYNAMIC axis (its token axis is that)."""
    if any(isinstance(d, Sym) for s in shapes for d in s):
        return []
    counts = dict.fromkeys(s[0] for s in shapes if len(s) >= 2)
    return [{i for i, s in enumerate(shapes) if len(s) >= 2 and s[0] == t} for t in counts]


def first_trace(
    attempt: Callable[[set[int]], R], tokens: list[set[int]], token_loop: Callable[[], bool], first, looped: bool
) -> R:
    """Trace the kernel as one tile (`attempt`) with each set of token parameters in turn,
    and each set without each of its members (a parameter whose rows are as many as the
    tokens may be a weight all the same: a [K, N] one with K = T, even the first); the
    first trace that succeeds is the kernel's. If none does, the error said is that of
    the likeliest set's trace that got furthest in the kernel's source (the earliest of
    those: a reading of its parameters that fails sooner is likelier the wrong one); but `first`,
    the error of the kernel's trace with its loops, if a one-tile trace meets a token
    loop (`token_loop`) or the kernel has loops of known trip counts (`looped`: that
    trace took one for its token loop)."""
    error: BuildError | None = None
    for token in tokens:
        for drop in [None, *sorted(token)]:
            try:
                return attempt(token - {drop})
            except BuildError as e:
                if token_loop():
                    raise first from None
                if error is None or token is tokens[0] and _line(e) > _line(error):
                    error = e
    assert error is not None
    raise first if looped else error


def _line(e: BuildError) -> int:
    """Where in the kernel's file an error stopped its trace (0 if nowhere)."""
    return e.where[1] if e.where else 0


def run(tr: Trace, call: Callable[[dict], None], at: Site) -> None:
    """Trace the body as the one body of a loop over one tile of all the rows."""
    tr.loop = Loop("loop", 1, index=Sym("idx"), at=at)
    for _ in loops._branches(tr):
        call({tr.names[i]: _tile(tr, i) for i in sorted(tr.token)})


def _tile(tr: Trace, i: int) -> Tensor:
    """Parameter i as the body sees it: an output (known in the second run) itself, an
    input its whole-rows tile."""
    p = tr.params[i]
    if p._lazy == ("output", i):
        return p
    rows = p.shape[0]
    tile = loops.view(p, p.shape, [tr.loop.index * rows, *[0] * (len(p.shape) - 1)])  # type: ignore[union-attr]
    tile.__dict__["_whole_of"] = i
    return tile


def target(x: Tensor) -> Tensor:
    """What a write into `x` writes: the parameter whose whole-rows tile `x` is, or `x`."""
    i = x.__dict__.get("_whole_of")
    return x if i is None else current("a write of an output").params[i]


def is_whole(x: Tensor) -> bool:
    """`x` is a parameter of a kernel with no loop: `x[:] = y` writes all its rows."""
    if x._param is None and x.__dict__.get("_whole_of") is None:
        return False
    return current("a write of an output").whole
