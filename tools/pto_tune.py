"""pto-tune: find the SK-03 configuration with the fewest modelled cycles.

    pto-tune kernel.mlir --tokens 16,128,300 [--target NAME] [--budget N]
             [--jobs N | --dask SCHEDULER] [--out results.jsonl] [--resume]
             [--exhaustive] [--dim NAME=V1,V2 ...] [--write-best best.mlir] [--plot tune.png]
             [--html tune.html]

Exit codes: 0 done; 1 a kernel the tuner cannot take (a diagnostic, or one error line);
2 a bad flag (one line); 130 interrupted (the store keeps what finished: --resume).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from xdsl.utils.exceptions import ParseError

from pto.diagnostics import Diagnostic, DiagnosticError, collect, render
from pto.driver.errors import UsageError, exit_flushed, flushed, stdout_closed
from pto.driver.parse import parse_error_diag, read_source
from pto.driver.verify import verify_each
from pto.targets import UnknownTargetError, load_target
from pto.tuner.kernel import TuneError
from pto.tuner.tune import MAX_JOBS

EXIT_USER, EXIT_USAGE, EXIT_INTERRUPTED = 1, 2, 130


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # one line, as the other tools
        print(f"pto-tune: error: {message}", file=sys.stderr)
        sys.exit(EXIT_USAGE)


def _parser() -> argparse.ArgumentParser:
    ap = _Parser(prog="pto-tune", description="Find the SK-03 configuration with the fewest modelled cycles.")
    ap.add_argument("kernel", help="a pto-level kernel (.mlir)")
    ap.add_argument("--tokens", required=True, help="token counts, comma-separated (the objective sums them)")
    ap.add_argument("--target", help="target name (default: the kernel's pto.target)")
    ap.add_argument("--budget", type=int, help="configurations the guided search evaluates")
    where = ap.add_mutually_exclusive_group()
    where.add_argument("--jobs", type=int, help="local worker processes (default: the CPU count)")
    where.add_argument("--dask", metavar="SCHEDULER", help="a Dask scheduler address (tcp://host:port)")
    ap.add_argument("--out", help="the JSON-lines results store")
    ap.add_argument("--resume", action="store_true", help="continue the store given by --out")
    ap.add_argument("--exhaustive", action="store_true", help="evaluate every legal configuration")
    ap.add_argument(
        "--dim",
        action="append",
        default=[],
        metavar="NAME=V1,V2",
        help="the values of one dimension (lists inside a value with '/': unroll=128/1,16)",
    )
    ap.add_argument("--write-best", metavar="FILE", help="write the winner as a kernel with its hints pinned")
    ap.add_argument("--plot", metavar="FILE", help="cycles per configuration and best so far, as PNG")
    ap.add_argument("--html", metavar="FILE", help="the run as a page: configurations, the plot, the winner's report")
    ap.add_argument("--quiet", action="store_true", help="no progress line")
    return ap


def _int_list(text: str, what: str) -> list[int]:
    try:
        vals = [int(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise UsageError(f"{what} must be comma-separated integers, got '{text}'") from None
    if not vals:
        raise UsageError(f"{what} needs at least one value")
    if min(vals) < 1:
        raise UsageError(f"{what} must be positive, got {min(vals)}")
    return vals


def _writable(path: str, flag: str) -> None:
    """A file the run will write: checked before anything is measured (the file if it
    exists, else its folder, as the path is resolved on disk: `a/../b` needs `a`)."""
    if not path or os.path.isdir(path):
        raise UsageError(f"{flag} needs a file name, got '{path}'")
    if os.path.exists(path):
        if not os.access(path, os.W_OK):
            raise UsageError(f"{flag} '{path}' is not writable")
        return
    where = os.path.dirname(path) or "."
    if not os.path.isdir(where) or not os.access(where, os.W_OK):
        raise UsageError(f"{flag} '{path}': cannot write in '{where}'")


def _value(text: str):
    """One value of a --dim: an integer, a list (`a/b`), a boolean, a name."""
    if "/" in text:
        return [_value(v) for v in text.split("/")]
    low = text.strip().lower()
    if low in ("true", "false"):
        return low == "true"
    try:
        return int(low)
    except ValueError:
        return text.strip()


def parse_dims(items: list[str]) -> dict[str, list]:
    dims: dict[str, list] = {}
    for item in items:
        name, sep, vals = item.partition("=")
        if not sep or not name.strip():
            raise UsageError(f"--dim takes NAME=V1,V2,..., got '{item}'")
        if name.strip() in dims:
            raise UsageError(f"--dim {name.strip()} given twice")
        dims[name.strip()] = [_value(v) for v in vals.split(",") if v.strip()]  # (`16` for unroll: see restrict)
    return dims


def _check(a: argparse.Namespace) -> None:
    if a.resume and not a.out:
        raise UsageError("--resume needs --out (the store to continue)")
    for flag in ("budget", "jobs"):
        if getattr(a, flag) is not None and getattr(a, flag) < 1:
            raise UsageError(f"--{flag} must be a positive integer, got {getattr(a, flag)}")
    if a.jobs is not None and a.jobs > MAX_JOBS:
        raise UsageError(f"--jobs must be at most {MAX_JOBS}, got {a.jobs}")
    if a.target is not None:
        load_target(a.target)  # ('' too: an unknown target)
    for flag in ("out", "write_best", "plot", "html"):
        if (path := getattr(a, flag)) is not None:
            _writable(path, "--" + flag.replace("_", "-"))
    if a.plot is not None and not a.plot.lower().endswith(".png"):
        raise UsageError(f"--plot writes a PNG: give a .png file, got '{a.plot}'")
    if a.exhaustive and a.budget is not None:
        raise UsageError("give --exhaustive or --budget, not both")


def _kernel_text(path: str, sink, sources: dict[str, str]) -> str:
    """The kernel's text, parsed and verified here so that a diagnostic shows its line."""
    text = read_source(path)  # (a UsageError, as pto-opt's)
    sources[path] = text
    from pto.tuner.evaluate import _parsed

    try:
        verify_each(_parsed(text, path))
    except ParseError as e:
        sink(parse_error_diag(e))
        raise TuneError("") from None
    return text


def _finish(a: argparse.Namespace, result) -> None:
    # The files first: a reader of stdout that has gone must not cost them.
    if a.write_best:
        result.write_best(a.write_best)
    if a.plot:
        from pto.tuner.plot import plot

        plot(result, a.plot)
    if a.html:
        result.save_html(a.html)
    print(result.table())
    if a.write_best:
        print(f"\nbest configuration written to {a.write_best}")
    if a.plot:
        print(f"plot written to {a.plot}")
    if a.html:
        print(f"page written to {a.html}")


def run(a: argparse.Namespace, sink, sources: dict[str, str]) -> int:
    from pto.tuner.tune import tune

    _check(a)
    tokens, dims = _int_list(a.tokens, "--tokens"), parse_dims(a.dim)
    if a.plot:
        from pto.tuner.plot import require_matplotlib

        require_matplotlib()
    text = _kernel_text(a.kernel, sink, sources)
    result = tune(
        text,
        tokens,
        target=a.target,
        budget=a.budget,
        jobs=a.jobs,
        dask=a.dask,
        out=a.out,
        resume=a.resume,
        exhaustive=a.exhaustive,
        dims=dims,
        progress=not a.quiet,
        name=a.kernel,
    )
    _finish(a, result)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    try:
        a = _parser().parse_args(argv)
    except SystemExit as e:
        exit_flushed(e)
    sources: dict[str, str] = {}

    def sink(d: Diagnostic) -> None:
        print(render(d, sources), file=sys.stderr)

    try:
        with collect(sink):
            return flushed(run(a, sink, sources))
    except (UsageError, UnknownTargetError) as e:
        print(f"pto-tune: error: {e}", file=sys.stderr)
        return EXIT_USAGE
    except TuneError as e:
        if str(e):
            print(f"pto-tune: error: {e}", file=sys.stderr)
        return EXIT_USER
    except DiagnosticError as e:
        sink(Diagnostic("error", e.location, e.message, e.notes))
        return EXIT_USER
    except BrokenPipeError:
        return stdout_closed()
    except KeyboardInterrupt:
        where = f"; {a.out} keeps what finished (--resume continues)" if a.out else ""
        print(f"\npto-tune: interrupted{where}", file=sys.stderr)
        return EXIT_INTERRUPTED


if __name__ == "__main__":
    sys.exit(main())
