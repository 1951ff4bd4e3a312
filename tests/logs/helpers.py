"""Shared by the log-analyzer tests: analyse a log given as text, list what a report would show, and
build torchrun's ChildFailedError summary (the record format every torchrun failure ends with)."""

from __future__ import annotations

import io

from troubleshooter.core.engine import Observations, evaluate
from troubleshooter.core.facts import Facts
from troubleshooter.logs import LogAnalyzer


def analyse_files(rules, files: dict[str, str], whole: bool = True) -> dict:
    """The analyzer's facts for several logs: each read as a file (``whole``, the CLI's path, where
    unmatched lines are never decoded one by one) or fed line by line (the streaming API)."""
    analyzer = LogAnalyzer(rules)
    for path, text in files.items():
        if whole:
            analyzer.feed_file(io.BytesIO(text.encode()), path)
        else:
            for line in text.strip("\n").splitlines():
                analyzer.feed(line + "\n", path)
    return analyzer.facts()


def analyse(rules, text: str, whole: bool = True) -> dict:
    """The analyzer's facts for one log ``job.log``."""
    return analyse_files(rules, {"job.log": text}, whole)


def analyse_lines(rules, text: str) -> dict:
    """The analyzer's facts for one log fed line by line."""
    return analyse(rules, text, whole=False)


def findings_of(rules, facts: dict) -> list:
    """The findings the rules draw from a log's facts, in report order."""
    return evaluate(rules, Observations(Facts.from_dict(facts, "logs")))


def shown(rules, facts: dict) -> list[str]:
    """Ids a report shows as a problem (severity error or warning), in report order."""
    return [f.id for f in findings_of(rules, facts) if f.severity in ("error", "warning")]


def torchrun_summary(root_rank: int, killed: tuple[tuple[int, int], ...] = (), title: bool = True) -> str:
    """torchrun's ChildFailedError block: ``root_rank`` exited with code 1 first; each (rank, signal) in
    ``killed`` is a survivor the launcher then signalled (15 SIGTERM, 9 SIGKILL)."""
    names = {9: "SIGKILL", 15: "SIGTERM"}
    lines = ["torch.distributed.elastic.multiprocessing.errors.ChildFailedError:", "=" * 60]
    if title:
        lines += ["train.py FAILED", "-" * 60]
    lines.append("Failures:")
    if not killed:
        lines.append("  <NO_OTHER_FAILURES>")
    for index, (rank, signal) in enumerate(killed, start=1):
        lines += [f"[{index}]:", "  time      : 2024-01-01_10:00:31", "  host      : node0",
                  f"  rank      : {rank} (local_rank: {rank})", f"  exitcode  : -{signal} (pid: {100 + rank})",
                  "  error_file: <N/A>", f"  traceback : Signal {signal} ({names[signal]}) received by PID {100 + rank}"]
    lines += ["-" * 60, "Root Cause (first observed failure):", "[0]:", "  time      : 2024-01-01_10:00:00",
              "  host      : node0", f"  rank      : {root_rank} (local_rank: {root_rank})",
              f"  exitcode  : 1 (pid: {100 + root_rank})", "  error_file: <N/A>",
              "  traceback : To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html", "=" * 60]
    return "\n".join(lines) + "\n"


def root_and_shown(rules, text: str, whole: bool = True) -> tuple[str | None, list[str]]:
    """(root cause id, ids shown as warning/error) for one log given as text."""
    facts = analyse(rules, text, whole)
    return (facts.get("log.root_cause") or {}).get("id"), shown(rules, facts)
