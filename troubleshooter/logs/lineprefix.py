"""Split a log line into who printed it, when, and what it says.

Launchers decorate each line: ``[rank3]:`` / ``[default0]:`` (torchrun), ``0:`` (``srun -l``),
``[1,0]<stderr>:`` (OpenMPI ``--tag-output``), ``worker-1:`` / ``172.16.0.2:`` (pdsh under DeepSpeed),
``(RayTrainWorker pid=1, ip=…)`` (Ray), ``[pod/…/…]`` (``kubectl logs --prefix``), ``svc-1  |``
(docker compose), ``[rank: 1]`` (Lightning), ``[1,mpirank:0,algo-1]<stderr>:`` (SageMaker); loggers and collectors add timestamps (ISO
``2024-11-21 23:15:30,123``, glog ``I1121 23:15:30.123456 pid file.cc:12]``, syslog ``Nov 21 23:15:30
host python3[12]:``, vLLM ``ERROR 11-21 23:15:30 file.py:12]``, HF ``[INFO|file.py:12] … >>``, loguru ``… | ERROR | m:f:12 -``);
a paste adds a quote's ``>`` and pytest its ``E`` column.
Prefixes nest (``0: [rank9]:[E1121 …]``), so they are peeled off in a loop; the innermost rank label
(the process's own) wins over an outer task or host label.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timezone

_PREFIX = re.compile(r"""\s*(?:
      \[(?:rank|Rank)(?::\s?|\s?)(?P<rank>\d+)\]:?
    | \[default(?P<local>\d+)\]:?
    | \[\d+,(?:mpirank:)?(?P<mpi>\d+)(?:,[\w.-]+)?\]<(?:stdout|stderr)>:
    | (?P<ip>\d{1,3}(?:\.\d{1,3}){3}):(?=\s)
    | (?P<srun>\d{1,5}):(?=\s)
    | (?P<host>[a-z][a-z0-9.-]*[0-9]|localhost):(?=\s)
    | \((?:\w+\s)?pid=\d+(?:,\s?ip=[\w.:-]+)?\)
    | \[pod/[^\]\s]+\]
    | [a-z][\w.-]*[-_]\d+\s+\|(?=\s)
    | [A-Z][a-z]{2}\s[\s\d]\d\s\d{2}:\d{2}:\d{2}\s[\w.-]+\s[\w./-]+(?:\[\d+\])?:
    | (?:DEBUG|INFO|WARNING|ERROR|CRITICAL)\s\d{2}-\d{2}\s\d{2}:\d{2}:\d{2}\s[\w./-]+:\d+\]
    | \[(?:DEBUG|INFO|WARNING|ERROR|CRITICAL)\|[\w./-]+:\d+\]
    | >{1,2}(?=\s|$)
    | \|\s?(?:TRACE|DEBUG|INFO|SUCCESS|WARNING|ERROR|CRITICAL)\s*\|\s?[\w.<>-]+:[\w.<>-]+:\d+\s-(?=\s)
    | E(?=\s{3})
    | \[?(?P<iso>\d{4}-\d{2}-\d{2}[T\ ]\d{2}:\d{2}:\d{2}(?:[.,]\d+)?)(?:Z|[+-]\d{2}:?\d{2})?\]?
    | \[?(?P<glog>[IWEF]\d{4}\ \d{2}:\d{2}:\d{2}(?:\.\d+)?)(?:\ +\d+)?(?:\ +[\w./<>-]+:\d+)?\]
    )""", re.X)
MAX_PREFIXES = 6
# the clock every timestamp of _PREFIX (iso, glog) contains: a line without it carries none
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


def split_prefix(line: str, year: int = 1970) -> LinePrefix:
    """Peel launcher and logger prefixes off ``line``; glog stamps carry no year, ``year`` supplies it."""
    out = LinePrefix(body=line)
    pos = 0
    for _ in range(MAX_PREFIXES):
        match = _PREFIX.match(line, pos)
        if not match or match.end() == pos:
            break
        groups = match.groupdict()
        for key in ("rank", "local", "mpi"):  # the process's own label: inner ones win
            if groups[key] is not None:
                out.rank = int(groups[key])
        if groups["srun"] is not None and out.rank is None:
            out.rank = int(groups["srun"])
        if groups["host"] or groups["ip"]:
            out.host = groups["host"] or groups["ip"]
        if groups["iso"]:
            out.timestamp = _iso_seconds(groups["iso"])
        elif groups["glog"]:
            out.timestamp = _glog_seconds(groups["glog"], year)
        pos = match.end()
    out.body = line[pos:].strip()
    return out
