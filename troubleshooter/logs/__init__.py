"""The log analyzer: signatures in ``rules/signatures/`` turned into ``log.*`` facts.

``analyze_paths(paths, rules)`` reads whole logs; ``LogAnalyzer(rules)`` is fed line by line
(``feed``) by callers that watch a running job. ``fact_specs(rules)`` declares every fact
the analyzer may produce, for ``troubleshoot rules check``.
"""

from __future__ import annotations

from typing import Any

from troubleshooter.core.facts import FactSpec
from troubleshooter.logs.analyzer import LogAnalyzer, LogResult, analyze_paths
from troubleshooter.logs.crossrank import FACTS as CROSSRANK_FACTS
from troubleshooter.logs.symptoms import FACTS as SYMPTOM_FACTS

__all__ = ["LogAnalyzer", "LogResult", "analyze_paths", "fact_specs"]

BASE_FACTS = (
    FactSpec("log.lines", "int", "Lines read from the analysed logs"),
    FactSpec("log.files", "list", "Log files analysed, in order ('<stdin>' for standard input)"),
    FactSpec("log.failed_ranks", "list", "Ranks that exited non-zero or crashed, per the logs"),
    FactSpec("log.exit_codes", "dict", "Rank (as a string) -> exit code reported by torchrun/srun/mpirun (negative = signal)"),
    FactSpec("log.failures", "list", "Launcher failure records: rank, local_rank, host, exit_code, signal, pid, traceback, root"),
    FactSpec("log.root_cause", "dict", "The hit judged the root cause: id, rank, path, line, detail, traceback"),
    FactSpec("log.suppressed", "list", "Generic hits withheld because a more specific failure explains them"),
    FactSpec("log.rank-crashed", "list", "The rank the launcher names as the first to fail, when no signature explains it"),
    FactSpec("log.unrecognized-failure", "list", "A failure (non-zero exit, uncaught exception) that no signature explains"),
)


def fact_specs(rules: Any) -> list[FactSpec]:
    """Every ``log.*`` fact: the base facts, one hit list per finding a signature can raise, and the info facts."""
    specs = [*BASE_FACTS, *SYMPTOM_FACTS, *CROSSRANK_FACTS]
    seen = {spec.key for spec in specs}
    for sig in getattr(rules, "signatures", []) or []:
        keys = []
        if sig.get("finding"):
            keys.append((f"log.{sig['finding']}", "list", f"Log lines that show {sig['finding']}"))
        for ref in sig.get("refine") or []:
            if isinstance(ref, dict) and ref.get("finding"):
                keys.append((f"log.{ref['finding']}", "list", f"Log lines that show {ref['finding']}"))
        if sig.get("fact"):
            single = "int" if (sig.get("captures") or {}).get("value") == "int" else "str"
            kind = single if sig.get("collect") in ("first", "last") else "list"
            keys.append((sig["fact"], kind, sig.get("note", "").strip().split("\n")[0]))
        for key, kind, doc in keys:
            if key not in seen:
                seen.add(key)
                specs.append(FactSpec(key, kind, doc))
    return specs
