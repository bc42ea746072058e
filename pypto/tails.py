"""The rows a `pypto.loop`'s tiles cover, and the two manual tails PyPTO authors write:

- a loop of whole `TILE`-row tiles, then a second loop over the rows left
  (`for j in pypto.loop(n * TILE, T, 1)`, views of 1 row at `[j, 0]`): together
  `loop_unroll`'s cascade `[TILE, 1]` (or `[TILE, r]`, a partial last r-row tile);
- a Python `if off + TILE <= T:` in the body choosing a whole tile or one with a
  `valid_shape` (PyPTO's parser makes it a `pypto.cond`): the body is traced once per
  outcome (a `SymBool`'s `bool()` answers from the trace's `Plan`), each outcome's views
  checked where it runs; the outcomes must compute the same ops, which makes one body
  whose last tile is partial, the standard loop.

Rows are checked as elsewhere (pypto/loops.py): by evaluating the user's expressions at
sample token counts, each row exactly once.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from dataclasses import dataclass, field

from pto.frontend.checks import BuildError, caller, in_api
from pto.pypto.errors import refuse
from pto.pypto.sym import Sym, SymBool, evaluate, no_value
from pto.pypto.tensor import Loop, Site, Trace, _traces

SAMPLE_EXTRA = (0, 1, 5)  # token counts past whole tiles at which the user's tile expressions are checked
MAX_TESTS = 3  # distinct conditions one body may branch on (2**3 traces of it at most)


def samples(total: object, tile: int, tr: Trace | None = None) -> list[int]:
    """Token counts to check a tiling at: the tensor's own if it is static; the call's
    if the loop's count is a number while the token axis is DYNAMIC (PyPTO's operator
    tests: `m_loop = (m + 38) // 39` from a config's shape): such a kernel is checked,
    kept and tuned at that count only."""
    if not isinstance(total, Sym):
        return [total]  # type: ignore[list-item]
    if tr is not None and tr.loop is not None and not isinstance(tr.loop.stop, Sym) and tr.tokens is not None:
        tr.specialised = True  # (the kernel is kept per token count: JitKernel.__call__)
        return [tr.tokens]
    return [n * tile + e for n in (0, 1, 3) for e in SAMPLE_EXTRA if n * tile + e > 0]


# ------------------------------------------------------------------ the rows covered


def _tiles(start: int, stop: int, size: int, t: int) -> list[tuple[int, int]]:
    """Tiles of `size` rows from `start` to `stop` as (offset, valid rows) of `t` rows."""
    return [(o, min(size, t - o)) for o in range(start, stop, size)]


def _wanted(lp: Loop, t: int) -> dict[str, list[tuple[int, int]]]:
    """The tiles the loop traced now may take at `t` tokens, by what it then covers."""
    assert lp.tile is not None
    whole = t // lp.tile * lp.tile
    if lp.part == 1:  # the rows the first loop's whole tiles leave
        return {"rest": _tiles(whole, t, lp.rest or 1, t)}
    every = {"all": _tiles(0, t, lp.tile, t), "whole": _tiles(0, whole, lp.tile, t)}
    return {lp.cover: every[lp.cover]} if lp.cover is not None else every


def check_rows(tr: Trace, offset, valid, rows: int, what: str, total: object) -> None:
    """The tile of `rows` rows at `offset` (valid: `valid`) is the pypto.loop's tile at
    each iteration (in a branch of a tail test: at each iteration where it runs)."""
    lp = tr.loop
    assert lp is not None
    if lp.tile is None:
        lp.tile, lp.tile_at = rows, caller()
    if lp.part == 1 and lp.rest is None:
        lp.rest = rows
    ts = samples(total, lp.tile, tr)
    if tr.plan is not None and tr.plan.samples is None:
        tr.plan.samples = ts
    for t in ts:
        envs = [e for *_, e in _iterations(lp, [t])]
        runs = [tr.plan is None or tr.plan.holds(e) for e in envs]  # (where this trace's branch runs)
        offs = [evaluate(offset, e) for e in envs]
        counts = [
            evaluate(valid, e) if valid is not None else rows if what == "pypto.view" else min(rows, t - o)
            for e, o in zip(envs, offs, strict=True)
        ]
        have = list(zip(offs, counts, strict=True))
        wanted = _wanted(lp, t)
        size = lp.tile if lp.part == 0 else lp.rest
        match = [k for k, want in wanted.items() if rows == size and _same(have, want, runs)]
        if not match:
            if tr.plan is not None:  # in a branch: a test that is not the tail test is the error
                check_tests(tr, tr.plan)
            refuse(_not_tiled(lp, t, offset, valid, rows, what, have, next(iter(wanted.values()))))
        if lp.part == 0 and lp.cover is None and t % lp.tile:  # (the two covers differ here)
            lp.cover = match[0]


def check_valid(tr: Trace, valid, rows: int, total: object) -> bool:
    """`valid` rows of a tile of the body (a view of the whole tile narrowing its
    valid_shape) are the loop's tile's valid rows at each iteration: the view is the tile."""
    lp = tr.loop
    assert lp is not None and lp.tile is not None
    if rows != (lp.tile if lp.part == 0 else lp.rest):
        return False
    for t in samples(total, lp.tile, tr):
        envs = [e for *_, e in _iterations(lp, [t])]
        runs = [tr.plan is None or tr.plan.holds(e) for e in envs]  # (where this trace's branch runs)
        counts = [(0, evaluate(valid, e)) for e in envs]
        if not any(_same(counts, [(0, c) for _, c in want], runs) for want in _wanted(lp, t).values()):
            return False
    return True


def _same(have: list, want: list, runs: list[bool]) -> bool:
    """The same tiles, at the iterations where this trace's branch runs."""
    return len(have) == len(want) and all(h == w for h, w, r in zip(have, want, runs, strict=True) if r)


def _not_tiled(lp: Loop, t: int, offset, valid, rows: int, what: str, have: list, want: list) -> str:
    assert lp.tile is not None
    got = f"at T = {t} it starts at {[o for o, _ in have][:6]} with {[c for _, c in have][:6]} valid rows"
    if lp.part == 1:
        return (
            f"the second pypto.loop's {what} of {rows} rows at {offset} (valid {valid}) does not cover the rows "
            f"the first loop's whole {lp.tile}-row tiles leave: {got}, not {[o for o, _ in want][:6]} "
            f"(rows [{t // lp.tile * lp.tile}, {t}), each once, in tiles of {lp.rest or rows} rows)"
        )
    wanted = f"{[o for o, _ in want][:6]} with {[c for _, c in want][:6]} valid rows"
    return (
        f"{what} of {rows} rows at {offset} (valid {valid}) does not tile the token axis: {got}, not "
        f"{wanted} (each row once); write view(x, [TILE, K], [i * TILE, 0], "
        "valid_shape=[pypto.min(TILE, T - i * TILE), K]), or whole tiles then a second pypto.loop over the rest"
    )


# ------------------------------------------------------------------ two loops


def start_rest(tr: Trace, start, stop, step, index: Sym) -> None:
    """A second token loop: accepted after a pypto.loop of whole tiles (it then takes the
    rows left, with its own range and index), refused otherwise."""
    lp = tr.loop
    assert lp is not None
    if tr.iteration >= 0:
        refuse("a token loop nested in the token loop is not supported: SK-03 has one token loop")
    if lp.kind != "loop" or lp.part != 0 or lp.tile is None:
        refuse(
            "an SK-03 kernel has one token loop, or a pypto.loop of whole tiles then a second over the rows left "
            "(a loop after loop_unroll, a third loop, or one after a loop that takes no tiles is not supported)"
        )
    if lp.cover == "all":
        refuse(
            f"the first pypto.loop already covers every row (its last {lp.tile}-row tile partial): a second token "
            "loop would compute rows twice; a second loop takes the rows the first's whole tiles leave"
        )
    lp.part, lp.start, lp.stop, lp.step, lp.index = 1, start, stop, step, index


def rest_rows(tr: Trace) -> int:
    """After the second loop: the rows of its tiles, no more than the first's."""
    lp = tr.loop
    assert lp is not None and lp.tile is not None
    if lp.rest is None:
        refuse("the second pypto.loop takes no token tiles: view the rows the first loop leaves")
    if lp.rest > lp.tile:
        refuse(f"the second pypto.loop's tiles ({lp.rest} rows) are larger than the first's ({lp.tile})")
    return lp.rest


def check_done(tr: Trace) -> None:
    """After the kernel: a loop of whole tiles is followed by one over the rows left."""
    lp = tr.loop
    if lp is not None and lp.kind == "loop" and lp.part == 0 and lp.cover == "whole":
        raise BuildError(
            f"pto.pypto: the pypto.loop takes whole {lp.tile}-row tiles only: the rows past them (T % {lp.tile}) "
            f"are never computed; add a second loop over them (`for j in pypto.loop(n * {lp.tile}, T, 1)` "
            f"with 1-row views at [j, 0]) or view a partial last tile with valid_shape=[pypto.min(TILE, T - i * "
            "TILE), ...]",
            lp.tile_at,
        )


def loop_factors(lp: Loop) -> tuple[list[int], bool]:
    """A pypto.loop's `pto.unroll` and whether its last factor takes a partial tile
    (`pto.tail`): its tile, the last partial; with a second loop of r-row tiles,
    `loop_unroll`'s cascade [TILE, r] (partial only for r > 1: [TILE, 1] is
    `loop_unroll(0, T, 1, unroll_list=[TILE, 1])` exactly)."""
    tile = lp.tile or 1
    if lp.rest is None or lp.rest == tile:
        return [tile], True
    return [tile, lp.rest], lp.rest > 1


# ------------------------------------------------------------------ tail tests


@dataclass
class Plan:
    """The outcomes of a pypto.loop body's tests on symbolic integers: the body is traced
    once per path (each combination of the outcomes it asks for), depth first, True
    first."""

    outcomes: list[bool] = field(default_factory=list)  # this path's answers, in the order asked
    asked: list[tuple[SymBool, bool]] = field(default_factory=list)  # this path's tests so far, answered
    tests: dict[str, tuple[SymBool, Site | None]] = field(default_factory=dict)  # every test, where it is
    samples: list[int] | None = None  # the token counts the body's rows were checked at

    def answer(self, c: SymBool, site: Site | None) -> bool:
        for d, o in self.asked:
            if d.name == c.name:
                return o  # the same test again in this path: the same answer
        if len(self.asked) == MAX_TESTS:
            raise BuildError(f"pto.pypto: {no_value(c.left)} (more than {MAX_TESTS} tests in one body)", site)
        o = self.outcomes[len(self.asked)] if len(self.asked) < len(self.outcomes) else True
        self.asked.append((c, o))
        self.tests.setdefault(c.name, (c, site))
        return o

    def holds(self, env: Mapping[str, int]) -> bool:
        """Whether this path runs at this iteration."""
        return all(c.eval(env) == o for c, o in self.asked)

    def next(self) -> bool:
        """Go to the next path; False once every path has been traced."""
        outs = [o for _, o in self.asked]
        while outs and not outs[-1]:
            outs.pop()
        if not outs:
            return False
        self.outcomes, self.asked = [*outs[:-1], False], []
        return True

    def first_site(self) -> tuple[SymBool, Site | None]:
        return next(iter(self.tests.values()))


def decide(c: SymBool) -> bool:
    """`bool()` of a comparison: in a pypto.loop body (the first of a pair), the current
    path's outcome; anywhere else refused, as an `if` on a symbolic integer."""
    tr = _traces[-1] if _traces else None
    lp = tr.loop if tr is not None else None
    if tr is None or tr.plan is None or lp is None or tr.iteration < 0 or not c.names <= {"T", lp.index.name}:
        refuse(no_value(c.left))
    if in_api(sys._getframe(2)):  # (this project's own code does not branch on a symbol: a bug, not a path)
        raise AssertionError(f"pto.pypto tested the symbolic condition {c}")
    return tr.plan.answer(c, caller())


def check_tests(tr: Trace, plan: Plan) -> None:
    """Each test the body branched on is the tail test: at every iteration it holds
    exactly where the tile is whole (or exactly where it is partial)."""
    lp = tr.loop
    assert lp is not None
    for c, site in plan.tests.values():
        if lp.tile is None or plan.samples is None:
            raise BuildError(f"pto.pypto: {no_value(c.left)}", site)
        tiles = lp.tile
        pairs = [(c.eval(e), (k + 1) * tiles <= t) for t, k, e in _iterations(lp, plan.samples)]
        if not (all(a == w for a, w in pairs) or all(a != w for a, w in pairs)):
            raise BuildError(f"pto.pypto: {no_value(c.left)}", site)


def _iterations(lp: Loop, ts: list[int]):
    """(tokens, position, env) of each iteration of the loop at each sample."""
    for t in ts:
        its = range(evaluate(lp.start, {"T": t}), evaluate(lp.stop, {"T": t}), evaluate(lp.step, {"T": t}) or 1)
        for k, i in enumerate(its):
            yield t, k, {"T": t, lp.index.name: i}
