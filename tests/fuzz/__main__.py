"""``python -m tests.fuzz TARGET --seconds N``: fuzz one parser (atheris when installed, else hypothesis).

Targets: logs, conditions, rules, report, flight_recorder (see tests/fuzz/targets.py). Every input
that raises an undocumented exception or hangs is saved under tests/fuzz/corpus/TARGET/ and
printed; ``tests/fuzz/test_corpus.py`` replays that corpus in the normal test run.
"""

from __future__ import annotations

import argparse
import sys
import time

from tests.fuzz.runner import problem, save_crash
from tests.fuzz.targets import TARGETS


def _with_atheris(target, seconds: float) -> None:
    import atheris

    def one(data: bytes) -> None:
        found = problem(target, data)
        if found:
            print(f"{save_crash(target, data)}: {found}", flush=True)

    atheris.Setup([sys.argv[0], f"-max_total_time={int(seconds)}"], one)
    atheris.Fuzz()


def _with_hypothesis(target, seconds: float) -> tuple[int, dict[str, str]]:
    from hypothesis import HealthCheck, Phase, given, settings

    runs, crashes, deadline = 0, {}, time.monotonic() + seconds

    class TimeUp(Exception):
        pass

    @settings(max_examples=10**9, deadline=None, database=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck))
    @given(target.inputs())
    def fuzz(data: bytes) -> None:
        nonlocal runs
        if time.monotonic() > deadline:
            raise TimeUp
        runs += 1
        found = problem(target, data)
        if found:
            key = found.splitlines()[0][:120] + found.splitlines()[-1][:120]
            if key not in crashes:
                crashes[key] = f"{save_crash(target, data)}: {found}"
                print(crashes[key], flush=True)

    try:
        fuzz()
    except TimeUp:
        pass
    return runs, crashes


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.fuzz", description=__doc__.splitlines()[0])
    parser.add_argument("target", choices=sorted(TARGETS))
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--engine", choices=["auto", "atheris", "hypothesis"], default="auto")
    args = parser.parse_args()
    target = TARGETS[args.target]
    engine = args.engine
    if engine == "auto":
        try:
            import atheris  # noqa: F401
            engine = "atheris"
        except ImportError:
            engine = "hypothesis"
    started = time.monotonic()
    if engine == "atheris":
        _with_atheris(target, args.seconds)
        return 0
    runs, crashes = _with_hypothesis(target, args.seconds)
    print(f"{args.target}: {runs} inputs in {time.monotonic() - started:.0f} s with hypothesis, "
          f"{len(crashes)} distinct problem(s)")
    return 1 if crashes else 0


if __name__ == "__main__":
    sys.exit(main())
