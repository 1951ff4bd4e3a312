"""What a log says about its ranks against each other: which rank a collective timeout waited for, and how
many different NCCL builds its ranks loaded.

A collective timeout is printed by the ranks that WAITED; the rank at fault is the one that never
arrived. The log names it outright (monitoredBarrier's "Rank 1 failed to pass monitoredBarrier",
TORCH_NCCL_DESYNC_DEBUG's "ranks that caused the desync are: [1] ...": the signatures capture it as a
``stuck_ranks`` or ``culprits`` value), or it shows it by elimination: a rank the log knows (a line,
a launcher record, an exception of its own) that printed no timeout while others did. Elimination
is kept only when the silent ranks are no more than the waiting ones (a launcher that killed most
ranks before their own timeout fired says nothing about which one was stuck). Which finding marks a
waiting rank, which hit values name the absent ranks and the rank-list wording are ``stuck_ranks`` in
``rules/symptoms.yaml``.
"""

from __future__ import annotations

import re
from typing import Any, Callable, Iterable

from troubleshooter.core.facts import FactSpec
from troubleshooter.logs.lineprefix import split_prefix
from troubleshooter.logs.symptomwords import SymptomWords, shipped_words

FACTS = (
    FactSpec("log.stuck_ranks", "list", "Ranks a collective timeout waited for: named by the log (monitoredBarrier, "
             "desync debug), else the known ranks without a timeout of their own while others timed out"),
    FactSpec("log.waiting_ranks", "list", "Ranks whose own collective timeout fired (they waited for the others)"),
    FactSpec("log.nccl_version_count", "int", "How many distinct NCCL versions the ranks' start-up banners show"),
)
COUNTED = {"log.nccl_banner_versions": "log.nccl_version_count"}  # a list fact -> the fact that counts its values


def count_facts(facts: dict[str, Any]) -> dict[str, int]:
    """The counts of the distinct values of the ``COUNTED`` list facts present."""
    return {count: len(facts[key]) for key, count in COUNTED.items() if isinstance(facts.get(key), list)}


def named_ranks(value: Any, words: SymptomWords | None = None) -> list[int]:
    """The leading rank list of a captured value: ``"1, 3"``, ``"[2] finished collective #4 ..."``."""
    match = (words or shipped_words()).rank_list.match(str(value))
    return [int(r) for r in re.findall(r"\d+", match.group(1))] if match else []


def labelled_ranks(windows: Iterable[bytes]) -> set[int]:
    """Ranks whose launcher label (``[rank3]:``, ``[default3]:``, ``[1,3]<stdout>:``, ``3: ``) starts a line of
    the analyzer's bounded head/tail windows: ranks the log shows alive though none of their lines matched."""
    ranks: set[int] = set()
    for window in windows:
        for line in window.decode("utf-8", "replace").splitlines():
            rank = split_prefix(line).rank
            if rank is not None:
                ranks.add(rank)
    return ranks


def stuck_rank_facts(hits: Iterable[Any], known_ranks: Iterable[int | None],
                     more_ranks: Callable[[], set[int]] = set, words: SymptomWords | None = None) -> dict[str, Any]:
    """``log.stuck_ranks`` / ``log.waiting_ranks`` from the analyzer's hits (``finding``, ``rank``,
    ``vars``, ``echo``) and every rank the log showed otherwise (``more_ranks`` is asked only when
    elimination is needed)."""
    words = words or shipped_words()
    hits = list(hits)
    timeouts = [h for h in hits if h.finding == words.timeout_finding]
    if not timeouts:
        return {}
    named = sorted({r for h in timeouts for var in words.naming_vars if var in h.vars
                    for r in named_ranks(h.vars[var], words)})
    waiting = sorted({h.rank for h in timeouts if h.echo and h.rank is not None} - set(named))
    facts: dict[str, Any] = {"log.waiting_ranks": waiting} if waiting else {}
    if named:
        facts["log.stuck_ranks"] = named
        return facts
    if not waiting:
        return facts
    known = {r for r in known_ranks if isinstance(r, int)} | {h.rank for h in hits if h.rank is not None} | more_ranks()
    silent = sorted(known - set(waiting))
    if silent and len(silent) <= len(waiting):
        facts["log.stuck_ranks"] = silent
    return facts
