"""Where evaluations run: in this process (`jobs=1`), a local process pool (the
default), or a Dask cluster (`dask[distributed]`, an optional extra). Each yields
(task, result) pairs as evaluations finish."""

from __future__ import annotations

import concurrent.futures as cf
import signal
from collections.abc import Iterator

from pto.tuner.evaluate import evaluate
from pto.tuner.kernel import TuneError

DASK_CONNECT_TIMEOUT = "5s"  # an unreachable scheduler is an error, not a hang


class Serial:
    def run(self, tasks: list[tuple]) -> Iterator[tuple[tuple, list[dict]]]:
        for t in tasks:
            yield t, evaluate(*t)

    def close(self) -> None:
        pass


def _leave_sigint_to_the_parent() -> None:
    """A worker's initializer: Ctrl-C reaches the whole process group, and only the
    parent should answer it (its one clean line), not each worker with a traceback."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


class Local:
    def __init__(self, jobs: int):
        self.pool = cf.ProcessPoolExecutor(max_workers=jobs, initializer=_leave_sigint_to_the_parent)

    def run(self, tasks: list[tuple]) -> Iterator[tuple[tuple, list[dict]]]:
        futures = {self.pool.submit(evaluate, *t): t for t in tasks}
        for f in cf.as_completed(futures):
            yield futures[f], f.result()

    def close(self) -> None:
        """Stop the workers and wait for the pool's threads here: a pool left running
        is joined by the interpreter's exit, where an interrupt or a dying worker made it
        print `Exception ignored in: <module 'threading'>`. What still runs is not
        wanted (the sweep is over or interrupted), so it is stopped, not waited for."""
        for worker in list((self.pool._processes or {}).values()):  # (no public way to stop them)
            worker.terminate()
        self.pool.shutdown(wait=True, cancel_futures=True)


class Dask:
    """Evaluations on a Dask cluster: `scheduler` is an address or a `distributed.Client`."""

    def __init__(self, scheduler):
        try:
            from distributed import Client
        except ImportError:
            raise TuneError("--dask needs dask.distributed (pip install 'pto-ir[dask]')") from None
        if isinstance(scheduler, Client):
            self.client, self.own = scheduler, False
            return
        if not isinstance(scheduler, str):
            raise TuneError(f"dask must be a scheduler's address or a distributed.Client, got {scheduler!r}")
        try:
            self.client, self.own = Client(scheduler, timeout=DASK_CONNECT_TIMEOUT), True
        except (OSError, TimeoutError, ValueError) as e:
            raise TuneError(f"cannot reach the Dask scheduler at {scheduler}: {str(e).splitlines()[0]}") from None

    def run(self, tasks: list[tuple]) -> Iterator[tuple[tuple, list[dict]]]:
        from distributed import as_completed

        futures = {self.client.submit(evaluate, *t, pure=False): t for t in tasks}
        for f in as_completed(futures):
            yield futures[f], f.result()

    def close(self) -> None:
        if self.own:
            self.client.close()


def executor(jobs: int, dask=None):
    if dask is not None:
        return Dask(dask)
    return Serial() if jobs == 1 else Local(jobs)
