"""`pto.interp.inline`: the model's timing functions written out into a compiled
program, specialised to what is known when compiling (the engines' agreement is
test_engine.py's)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from pto.dialects.npu import Pipe
from pto.interp import inline
from pto.interp.codegen_base import Emitter
from pto.interp.machine import Core


def hot_emitter() -> Emitter:
    e = Emitter(hot=True, ns={})
    e.states = {(t, p): f"s_{t}_{p.value}" for t in ("free", "last_done", "busy", "pipe_wait") for p in Pipe}
    e.states.update({(t, "ub:0"): f"s_{t}_ub0" for t in ("written", "read")})
    return e


def test_a_booking_written_out_keeps_its_keys_in_locals_and_its_loops_unrolled() -> None:
    e = hot_emitter()
    e.write(
        Core.run,
        inline.Rt("core"),
        SimpleNamespace(name="npu.vadd"),
        Pipe.VECTOR,
        inline.Rt("c"),
        0.0,
        ("ub:0",),
        ("ub:0",),
        64,
    )
    source = "\n".join(e.lines)
    assert "for " not in source and "[" not in source.replace("events.append", "")  # no table lookups
    assert "s_free_vector" in source and "s_written_ub0" in source and "s_read_ub0" in source
    assert e.issued == 1  # the issue slot counted when compiling, not by a line per op
    compile("def f():\n" + source, "<test>", "exec")  # (indented as a program's body)


def test_an_if_on_a_known_value_keeps_one_branch() -> None:
    e = hot_emitter()
    e.write(Core.wait_flag, inline.Rt("core"), "op", Pipe.MTE2, Pipe.SCALAR, 0)
    source = "\n".join(e.lines)
    assert "core.issue = t_" in source and "pipe_wait" not in source and "s_pipe_wait" not in source


def loops_while(core, n):
    while n:
        n -= 1


def test_python_the_writer_cannot_specialise_is_an_error_when_compiling() -> None:
    with pytest.raises(inline.InlineError, match="cannot write out"):
        hot_emitter().write(loops_while, inline.Rt("core"), inline.Rt("n"))


def scaled(core, c):
    x = 3
    x *= c
    core.out = x


def test_an_augmented_assignment_to_a_known_value_writes_its_value_first() -> None:
    """`x = 3; x *= c` (x known when compiling, c not): `x = 3 * c`, not `x *= c` of a
    local never assigned."""
    e = hot_emitter()
    e.write(scaled, inline.Rt("core"), inline.Rt("c"))
    ns = dict(e.ns)  # (the constants it names)
    exec("def f(core, c):\n" + "\n".join(e.lines), ns)  # noqa: S102
    core = SimpleNamespace()
    ns["f"](core, 5)
    assert core.out == 15
