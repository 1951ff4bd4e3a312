"""Split a log line into who printed it, when, and what it says.

Launchers decorate each line: ``[rank3]:`` / ``[default0]:`` (torchrun), ``0:`` (``srun -l``),
``[1,0]<stderr>:`` (OpenMPI ``--tag-output``), ``worker-1:`` / ``172.16.0.2:`` (pdsh under DeepSpeed),
``(RayTrainWorker pid=1, ip=…)`` (Ray), ``[pod/…/…]`` (``kubectl logs --prefix``); log collectors and
loggers add timestamps (ISO, glog, syslog) and their own fields; a paste adds a quote's ``>``. The
wordings are ``line_prefixes`` of ``rules/symptoms.yaml``; this module is the mechanism. Prefixes nest
(``0: [rank9]:[E1121 …]``), so they are peeled off in a loop; the innermost rank label (the
process's own) wins over an outer task or host label. A tqdm bar that a message was printed after
(no newline ended the bar) is a prefix too, and what carriage returns redrew over is dropped first.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timezone

from troubleshooter.logs.symptomwords import SymptomWords, shipped_words

MAX_PREFIXES = 6
# the clock every timestamp prefix (iso, glog) contains: a line without it carries none
_CLOCK = re.compile(r":\d{2}:\d{2}")


@dataclass
class LinePrefix:
    """What the prefixes of one line said; ``body`` is the rest of the line."""

    body: str
    rank: int | None = None
    host: str | None = None
    timestamp: float | None = None


def _iso_seconds(text: str) -> float | None:
    try:
        return datetime.fromisoformat(text.replace(",", ".").replace("T", " ")).replace(
            tzinfo=timezone.utc).timestamp()
    except ValueError:
        return None


def _glog_seconds(text: str, year: int) -> float | None:
    try:
        stamp = datetime.strptime(f"{year}{text[1:]}", "%Y%m%d %H:%M:%S.%f" if "." in text else "%Y%m%d %H:%M:%S")
    except ValueError:
        return None
    return stamp.replace(tzinfo=timezone.utc).timestamp()


def may_carry_timestamp(line: str) -> bool:
    """False when :func:`split_prefix` surely finds no timestamp in ``line`` (a quick check)."""
    return _CLOCK.search(line) is not None


def split_prefix(line: str, year: int = 1970, words: SymptomWords | None = None) -> LinePrefix:
    """Peel launcher and logger prefixes off ``line``; glog stamps carry no year, ``year`` supplies it.
    The prefix wordings are ``words.prefix`` (``line_prefixes`` of ``rules/symptoms.yaml``; default: the
    shipped ones)."""
    words = words or shipped_words()
    prefix, kinds = words.prefix, words.prefix_kinds
    redrawn = line.rfind("\r")
    if redrawn >= 0:  # progress-bar redraws (carriage returns) before it: a terminal shows what follows the last
        line = line[redrawn + 1:]
    out = LinePrefix(body=line)
    pos = 0
    for _ in range(MAX_PREFIXES):
        match = prefix.match(line, pos)
        if not match or match.end() == pos:
            break
        if match.lastindex is not None:
            for name, value in match.groupdict().items():
                if value is None:
                    continue
                kind = kinds[name]
                if kind == "rank":  # the process's own label: inner ones win
                    out.rank = int(value)
                elif kind == "task" and out.rank is None:
                    out.rank = int(value)
                elif kind == "host":
                    out.host = value
                elif kind == "iso":
                    out.timestamp = _iso_seconds(value)
                elif kind == "glog":
                    out.timestamp = _glog_seconds(value, year)
        pos = match.end()
    out.body = line[pos:].strip()
    return out
