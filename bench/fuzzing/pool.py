"""The pool of forked workers that run the cases."""

from __future__ import annotations

import multiprocessing as mp
import time
from multiprocessing.connection import wait as mp_wait

from pto.bench.fuzzing.cases import Case, Result
from pto.bench.fuzzing.run import needs_fresh_worker, worker_main


class Pool:
    """Forked workers; a case that does not answer within timeout + grace is a hang and
    its worker is killed and replaced."""

    def __init__(self, jobs: int, tmp_root: str, mem_limit: int, grace: float = 5.0):
        self.ctx = mp.get_context("fork")
        self.tmp_root, self.mem_limit, self.grace = tmp_root, mem_limit, grace
        self.workers = [self._spawn() for _ in range(max(1, jobs))]

    def _spawn(self) -> dict:
        parent, child = self.ctx.Pipe()
        proc = self.ctx.Process(target=worker_main, args=(child, self.tmp_root, self.mem_limit), daemon=True)
        proc.start()
        child.close()
        return {"proc": proc, "conn": parent, "case": None, "deadline": 0.0, "start": 0.0}

    def _replace(self, w: dict) -> None:
        if w["proc"].is_alive():
            w["proc"].kill()
        w["proc"].join(5)
        w["conn"].close()
        w.update(self._spawn())

    def run(self, cases):
        """Yield a Result per case, in completion order."""
        todo = list(reversed(list(cases)))
        while todo or any(w["case"] is not None for w in self.workers):
            for w in self.workers:
                if w["case"] is None and todo:
                    case = todo.pop()
                    try:
                        w["conn"].send(case)
                    except (BrokenPipeError, OSError):
                        self._replace(w)
                        w["conn"].send(case)
                    w.update(
                        case=case, start=time.perf_counter(), deadline=time.perf_counter() + case.timeout + self.grace
                    )
            busy = [w for w in self.workers if w["case"] is not None]
            timeout = max(0.0, min(w["deadline"] for w in busy) - time.perf_counter())
            ready = mp_wait([w["conn"] for w in busy], timeout)
            for w in busy:
                case = w["case"]
                if w["conn"] in ready:
                    try:
                        res = w["conn"].recv()
                    except (EOFError, OSError):
                        code = w["proc"].exitcode if not w["proc"].is_alive() else None
                        w["proc"].join(1)
                        code = w["proc"].exitcode
                        res = Result(
                            case.id,
                            case.kind,
                            case.label,
                            "internal",
                            secs=time.perf_counter() - w["start"],
                            sig=f"the process died (exit {code})",
                            detail=f"worker exit code {code} (a signal if negative; -9: the OOM killer)",
                        )
                        self._replace(w)
                    else:
                        if needs_fresh_worker(res):
                            self._replace(w)
                    w["case"] = None
                    yield res
                elif time.perf_counter() > w["deadline"]:
                    self._replace(w)
                    w["case"] = None
                    yield Result(
                        case.id,
                        case.kind,
                        case.label,
                        "hang",
                        secs=case.timeout + self.grace,
                        sig="hang (killed: no answer to the alarm, stuck outside Python)",
                        frame="<killed>",
                    )

    def run_one(self, case: Case) -> Result:
        return next(iter(self.run([case])))

    def close(self) -> None:
        for w in self.workers:
            try:
                w["conn"].send(None)
            except (BrokenPipeError, OSError):
                pass
        for w in self.workers:
            w["proc"].join(5)
            if w["proc"].is_alive():
                w["proc"].kill()
