"""Scanner throughput on a large real codebase vs bare ``ast.parse`` of the same files, same run.

Usage: python bench/scan_throughput.py [--project] [--phases] [--repeat N] [--cpu] [ROOT] (default: the installed torch
package's sources; ``--help`` lists the options; an unknown option, a ROOT that does not exist or holds no Python file
is a usage error, exit 2). Prints lines/second for both and the ratio; the target is a ratio of at most 2.0. Files are
scanned one at a time (``FileScanner.scan``); ``--project`` scans ROOT as one project instead (``scan_paths``: local imports
followed, cross-file knowledge, what ``troubleshoot scan DIR`` does). ``--repeat N`` alternates N parse and N scan
runs and keeps the best of each (the machine is shared: the best run is the least disturbed one). ``--cpu`` times
both with the process's CPU time instead of the wall clock: on a loaded machine the time the process waits for a
core is then left out of both figures (the wall clock is the default). ``--phases`` (with ``--project``) also
prints where the scan's time goes, phase by phase (parse, project summary, index, each checker ...), for the
least disturbed run: each phase's time and its share of the bare parse (the wrappers that time them add a little).
"""

from __future__ import annotations

import argparse
import ast
import functools
import gc
import sys
import time
from contextlib import contextmanager
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # this checkout's scanner, not an installed one

from troubleshooter.scan import iter_python_files, scan_paths  # noqa: E402
from troubleshooter.scan.checkers import all_checkers  # noqa: E402
from troubleshooter.scan import shipped_patterns  # noqa: E402
from troubleshooter.scan.runner import FileScanner  # noqa: E402


def torch_root() -> str:
    """The installed torch package directory, found without importing torch."""
    import importlib.util
    spec = importlib.util.find_spec("torch")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("torch is not installed; pass a directory to scan")
    return list(spec.submodule_search_locations)[0]


clock = time.perf_counter


def _parse_all(files: list[str], blobs: list[bytes], collect: bool = True) -> float:
    """Time bare ``ast.parse`` of every file; ``collect=False`` with the cyclic garbage collector off, as
    the scanner itself parses (the like-for-like baseline)."""
    if not collect:
        gc.disable()
    try:
        t0 = clock()
        for path, data in zip(files, blobs):
            try:
                ast.parse(data, filename=path)
            except (SyntaxError, ValueError):
                pass
        return clock() - t0
    finally:
        gc.enable()


def _scan_all(root: str, files: list[str], blobs: list[bytes], project: bool) -> tuple[float, int]:
    scanner = FileScanner(all_checkers(), shipped_patterns())
    hits = 0
    t0 = clock()
    if project:
        hits = sum(len(v) for v in scan_paths([root]).hits.values())
    else:
        for path, data in zip(files, blobs):
            hits += sum(len(v) for v in scanner.scan(path, data).hits.values())
    return clock() - t0, hits


@contextmanager
def _timed_phases(spent: dict[str, float]):
    """Time the scan's phases into ``spent`` (phase -> seconds) while the block runs: each phase's function is
    wrapped (a checker's hits are listed inside its own time). A phase called inside another counts in both."""
    from troubleshooter.scan import model, runner
    from troubleshooter.scan.inline import Inliner
    from troubleshooter.scan.project import Project

    targets = [(runner, "parse", "parse (ast), also inside the phases asking for a late tree"),
               (runner, "compiles", "syntax check only (symbol table: trees nothing reads)"),
               (Project, "distributed_path", "distributed path (imports, bytes)"),
               (Project, "relevant", "project: relevance test (bytes)"), (Project, "add", "project: summary"),
               (Project, "add_source", "project: helpers read from disk (parse + summary)"),
               (runner.FileScanner, "index", "index, all files (inlining + index)"),
               (Inliner, "expand", "  inlining of set-up helpers"), (model.ModuleIndex, "__init__", "  ModuleIndex"),
               (model, "propagate_rank0", "rank-0 propagation (also inside ModuleIndex)"),
               (runner.FileScanner, "check", "checks, all files")]
    for checker in all_checkers():
        for method in ("check", "check_handled"):
            if method in type(checker).__dict__:
                targets.append((type(checker), method, f"  {checker.id}" + (" (handled)" if method != "check" else "")))
    spent.update((label, 0.0) for _, _, label in targets)  # printed in this order
    saved = []

    def timed(function, label, listed):
        @functools.wraps(function)
        def run(*args, **kwargs):
            t0 = clock()
            try:
                found = function(*args, **kwargs)
                return list(found) if listed else found
            finally:
                spent[label] = spent.get(label, 0.0) + clock() - t0
        return run

    for owner, name, label in targets:
        function = getattr(owner, name)
        saved.append((owner, name, function))
        setattr(owner, name, timed(function, label, name.startswith("check") and owner is not runner.FileScanner))
    try:
        yield
    finally:
        for owner, name, function in reversed(saved):
            setattr(owner, name, function)


def _arguments(argv: list[str]) -> argparse.Namespace:
    """The command line; unknown options, a ROOT that does not exist and a ROOT without Python files are usage
    errors (exit 2), never a ratio of nothing."""
    parser = argparse.ArgumentParser(
        prog="python bench/scan_throughput.py",
        description="Scanner throughput against bare ast.parse of the same files (target: at most 2.0x).")
    parser.add_argument("root", nargs="?", metavar="ROOT",
                        help="a directory (or .py file) to scan; default: the installed torch package's sources")
    parser.add_argument("--project", action="store_true",
                        help="scan ROOT as one project (what `troubleshoot scan DIR` does) instead of file by file")
    parser.add_argument("--phases", action="store_true", help="with --project: where the scan's time goes")
    parser.add_argument("--repeat", type=int, default=1, metavar="N",
                        help="N alternating parse and scan runs, the best of each kept (default 1)")
    parser.add_argument("--cpu", action="store_true", help="time with the process's CPU time, not the wall clock")
    args = parser.parse_args(argv)
    if args.repeat < 1:
        parser.error("--repeat must be at least 1")
    if args.phases and not args.project:
        parser.error("--phases needs --project")
    if args.root is None:
        args.root = torch_root()
    elif not Path(args.root).exists():
        parser.error(f"ROOT {args.root!r} does not exist")
    # the walker skips site-packages dirs *below* the root, not the root itself
    args.files = [p for p, ok in iter_python_files([args.root]) if ok]
    if not args.files:
        parser.error(f"no Python file under ROOT {args.root!r}")
    return args


def main(argv: list[str]) -> int:
    global clock
    args = _arguments(argv)
    project, phases, repeat, root = args.project, args.phases, args.repeat, args.root
    if args.cpu:
        clock = time.process_time
    files = args.files
    blobs = [Path(p).read_bytes() for p in files]
    lines = sum(b.count(b"\n") + 1 for b in blobs)
    shipped_patterns()  # the rules are loaded once per process, not per scan: not timed
    bares, bares_no_gc, fulls = [], [], []
    for _ in range(repeat):
        bares.append(_parse_all(files, blobs))
        bares_no_gc.append(_parse_all(files, blobs, collect=False))
        full, hits = _scan_all(root, files, blobs, project)
        fulls.append(full)
    bare, bare_no_gc, full = min(bares), min(bares_no_gc), min(fulls)
    breakdown: dict[str, float] = {}
    if phases and project:  # timed apart: the wrappers must not slow the runs measured above
        best = None
        for _ in range(repeat):
            spent: dict[str, float] = {}
            with _timed_phases(spent):
                took, _ = _scan_all(root, files, blobs, project)
            if best is None or took < best:
                best, breakdown = took, spent

    print(f"files: {len(files)}  lines: {lines}  root: {root}  (best of {repeat}, {'CPU' if args.cpu else 'wall'} time)")
    print(f"bare ast.parse : {bare:7.2f} s  {lines / bare:12,.0f} lines/s")
    print(f"troubleshoot scan{' (project)' if project else ''}: {full:7.2f} s  {lines / full:12,.0f} lines/s  ({hits} hits)")
    ratio = full / bare
    print(f"ratio scan / parse: {ratio:.2f}x  (target <= 2.0x: {'met' if ratio <= 2.0 else 'NOT met'})")
    # the scanner parses with the garbage collector off; against a parse that does the same:
    print(f"ratio scan / parse with gc off: {full / bare_no_gc:.2f}x  (bare ast.parse, gc off: {bare_no_gc:.2f} s)")
    if breakdown:
        print(f"\nphases of the least disturbed timed scan ({best:.2f} s with the timing wrappers):")
        labels = list(breakdown)
        last_phase = labels.index("checks, all files") + 1  # then the checkers, the slowest first
        for label in labels[:last_phase] + sorted(labels[last_phase:], key=lambda k: -breakdown[k]):
            if breakdown[label] >= (0.001 if labels.index(label) >= last_phase else 1e-9):  # a checker: 1 ms at least
                print(f"  {label:52s} {breakdown[label]:6.3f} s  {breakdown[label] / bare:5.2f}x parse")
    return 0 if ratio <= 2.0 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
