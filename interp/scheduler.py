"""Deterministic interleaving of the cores of one `npu.launch`.

Each core's program runs in its own thread (the xDSL interpreter is recursive, so a
program cannot otherwise be suspended in the middle of a loop), but only one thread
runs at a time: at yield points (every GM access and cross-core op) a baton passes to
the runnable core with the smallest model clock, ties broken by core order, once that
core is more than QUANTUM cycles behind the running one. The
interleaving therefore depends only on the program and the model, never on the OS,
and L2 sees the GM accesses of all cores in roughly model-time order.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

import numpy as np

# Model cycles a core may run ahead of the slowest ready core before it yields.
QUANTUM = 2000


class DeadlockError(RuntimeError):
    pass


@dataclass
class Worker:
    index: int
    name: str
    run: Callable[[], None]
    clock: Callable[[], float]
    waiting: Callable[[], bool] | None = None  # set while blocked: True when it may go on
    what: str = ""
    done: bool = False
    # `waiting` holds whenever this worker is the earliest and its clock finite (a
    # compiled graph core's wait for a task: `compiled._Wait`).
    earliest: bool = False


W = TypeVar("W", bound=Worker)


@dataclass
class ThreadWorker(Worker):
    """A worker in its own thread, which waits on `turn` for the baton (the compiled
    engine's workers are generators, for which making an Event each cost 2% of a run)."""

    turn: threading.Event = field(default_factory=threading.Event)


@dataclass
class Scheduler:
    workers: list[ThreadWorker] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _current: int = -1
    _error: BaseException | None = None
    _local: threading.local = field(default_factory=threading.local)

    def add(self, name: str, run: Callable[[], None], clock: Callable[[], float]) -> None:
        self.workers.append(ThreadWorker(len(self.workers), name, run, clock))

    def run_all(self) -> None:
        if not self.workers:
            return
        threads = [threading.Thread(target=self._body, args=(w,), daemon=True) for w in self.workers]
        for t in threads:
            t.start()
        with self._lock:
            self._pass_baton()
        for t in threads:
            t.join()
        if self._error is not None:
            raise self._error

    # Called from a worker thread -------------------------------------------------

    def yield_now(self) -> None:
        """Let a core that is behind in model time run. A core within `QUANTUM` cycles of
        the slowest ready one keeps going: switching threads at every GM access would
        cost more than the accesses."""
        w: ThreadWorker = self._local.worker
        if not behind(self.workers, w):
            return
        with self._lock:
            self._pass_baton()
        self._await_turn(w)

    def block_until(self, ready: Callable[[], bool], what: str) -> None:
        w: ThreadWorker = self._local.worker
        if ready():
            return
        with self._lock:
            w.waiting, w.what = ready, what
            self._pass_baton()
        self._await_turn(w)
        w.waiting = None

    def wait(self, ready: Callable[[], bool], what: str) -> None:
        """Like `block_until`, but hand the baton on even if `ready` holds already: of
        the cores that may go on, the one with the smallest clock goes first (a task
        graph's idle cores take tasks in the order they would on the machine)."""
        w: ThreadWorker = self._local.worker
        with self._lock:
            w.waiting, w.what = ready, what
            self._pass_baton()
        self._await_turn(w)
        w.waiting = None

    def blocked(self, index: int) -> bool:
        """Whether worker `index` waits (for a flag, a task) rather than runs."""
        return self.workers[index].waiting is not None

    # ------------------------------------------------------------------------------

    def _body(self, w: ThreadWorker) -> None:
        self._local.worker = w
        try:
            self._await_turn(w)
            with np.errstate(all="ignore"):  # per thread: overflow to inf is the machine's result
                w.run()
        except _Aborted:
            pass
        except BaseException as e:  # handed to the main thread
            if self._error is None:
                self._error = e
        with self._lock:
            w.done = True
            self._pass_baton()

    def _await_turn(self, w: ThreadWorker) -> None:
        w.turn.wait()
        w.turn.clear()
        if self._error is not None:
            raise _Aborted()

    def _pass_baton(self) -> None:
        """Hand the baton to the next worker (possibly the caller): set its event."""
        live = [w for w in self.workers if not w.done]
        if self._error is None:
            nxt = first_ready(live)
            if nxt is not None:
                self._current = nxt.index
                nxt.turn.set()
                return
            if live:
                self._error = deadlock(live)
        for w in live:  # wake everyone to unwind
            w.turn.set()


def behind(workers: Sequence[Worker], w: Worker) -> bool:
    """Whether a core that may go on is more than `QUANTUM` cycles behind `w`: then `w`
    yields. A blocked core whose wait is over counts too: it should not lag until `w`
    blocks. The clock test comes first, as it is the cheap one."""
    mine = w.clock()
    return any(
        o is not w and not o.done and o.clock() + QUANTUM < mine and (o.waiting is None or o.waiting()) for o in workers
    )


def first_ready(live: Sequence[W]) -> W | None:
    """The core that runs next: the first that may go on in (clock, index) order; waits
    are only tested until then."""
    for w in sorted(live, key=lambda w: (w.clock(), w.index)):
        if w.waiting is None or w.waiting():
            return w
    return None


def deadlock(live: Sequence[Worker]) -> DeadlockError:
    waits = "; ".join(f"{w.name} waits for {w.what}" for w in live)
    return DeadlockError(f"deadlock: {waits}")


class _Aborted(BaseException):
    """Unwinds a worker thread after another one failed."""
