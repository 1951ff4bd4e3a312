"""Symptoms of runs that print no error line, as neutral facts for the rules in ``rules/checks``.

One cheap pass over a bounded window of each log (its first ``HEAD`` bytes and its last ``TAIL``
bytes, so the cost does not grow with the log): compiled regexes over the window's bytes find

- lines that every rank printed identically (launcher/rank prefixes, timestamps and rank numbers
  masked): training lines that carry a loss value, and progress lines (epoch/step counters) without
  one. Progress-bar redraws (tqdm lines with a rate) are left out: they repeat by themselves;
- the last progress position (``step/total``) the log shows, to tell a stall at the end of an epoch;
- how long the last progress bar before the first timed-out wait had been running, over that wait's
  timeout: about 1 when one rank ran a phase alone (eval, tokenizing, saving) while the others waited;
- rates (``it/s``, ``s/it``, samples/images/tokens per second, per GPU or for the whole job) paired
  with the world size the log declared before them (the world-size wordings are the
  ``log.world_size_*`` fact signatures of ``rules/signatures``);
- the start-up stage a log ENDS in: its last start-up line (the ``log.startup_<stage>`` fact
  signatures: rendezvous, communicator set-up, ...) with no training progress and no error after it,
  the shape of a run that hung before its first step;
- global ranks announced by more than one process while another rank of the declared world size was
  never announced (the ``log.rank_announced`` fact signatures: Lightning's "GLOBAL_RANK: n", ...):
  two processes computed the same rank, so the world can never complete;
- processes that each announced running alone (the ``log.solo_announced`` fact signatures:
  "Not using distributed mode", "Distributed environment: NO", ...) one after another at start-up,
  with no training or failure line between them: several copies, none of them in a distributed world.

The wordings (labels, loss/progress/rate words, what is masked) are ``rules/symptoms.yaml``
(:mod:`troubleshooter.logs.symptomwords`); this module is the mechanism. The rules decide what the
facts mean and gate them on enough evidence.
"""

from __future__ import annotations

import re
import statistics
from collections import Counter
from itertools import groupby
from typing import Any, Iterable

from troubleshooter.core.facts import FactSpec
from troubleshooter.logs.lineprefix import split_prefix
from troubleshooter.logs.symptomwords import SymptomWords, shipped_words

HEAD = 64 << 10         # bytes read from the start of each log (a pasted log fits whole)
TAIL = 32 << 10         # and from its end

FACTS = (
    FactSpec("log.loss_lines", "int", "Distinct training lines with a loss value, or bare values (stamps and rank numbers masked)"),
    FactSpec("log.loss_line_copies", "int", "How many times each of those lines was printed, most commonly"),
    FactSpec("log.loss_line_copies_share", "float", "Share of the distinct loss lines printed exactly log.loss_line_copies times"),
    FactSpec("log.progress_lines", "int", "Distinct epoch/step progress lines without a loss value (progress-bar redraws left out)"),
    FactSpec("log.progress_line_copies", "int", "How many times each of those progress lines was printed, most commonly"),
    FactSpec("log.progress_line_copies_share", "float", "Share of the distinct progress lines printed exactly log.progress_line_copies times"),
    FactSpec("log.progress_last_step", "int", "The step of the last progress position (step/total) in the log"),
    FactSpec("log.progress_last_total", "int", "The total of the last progress position in the log"),
    FactSpec("log.progress_last_fraction", "float", "How far into its epoch the last progress position is (step/total)"),
    FactSpec("log.progress_elapsed_over_timeout", "float", "Running time of the last progress bar before the first timed-out wait, over that wait's timeout"),
    FactSpec("log.rate_world_sizes", "list", "The smallest and the largest world size with iteration rates after them"),
    FactSpec("log.rate_scaling", "float", "Per-rank rate (iterations or samples per second) at the largest world size over the rate at the smallest"),
    FactSpec("log.ranks_announced_twice", "list", "Global ranks announced by more than one process while a rank below the declared world size never was"),
    FactSpec("log.solo_processes", "int", "Processes that announced running alone one after another at start-up (two or more)"),
    FactSpec("log.lines_repeated_in_place", "int", "k when every non-blank line, start-up lines too, comes k (>= 2) times in a row, word for word: the output printed k times over, not k ranks"),
    FactSpec("log.ended_in_stage", "str", "The start-up stage (log.startup_<stage> signatures) the log ends in: no progress and no error after its last start-up line"),
)

MAX_LINES = 20000       # lines of one family counted per log
MIN_REPEATED_RUNS = 4  # runs of repeated lines before the whole output counts as printed several times over
MIN_OTHER_RUNS = 2     # of them, runs of lines that tell one process (not training lines, or labelled or stamped)
MAX_AFTER_STAGE = 40    # non-blank lines after the last start-up line that still count as "ended there"
STAGE_FACT = "log.startup_"  # fact signatures log.startup_<stage> mark the start-up lines of each stage
RANK_FACT = "log.rank_announced"  # fact signatures of a process announcing its global rank
SOLO_FACT = "log.solo_announced"  # fact signatures of a process announcing it runs with no distributed world


class SymptomScanner:
    """Collects the symptom facts from the start and the end of each log it is shown."""

    def __init__(self, world_size_patterns: Iterable[re.Pattern[bytes]] = (),
                 stage_patterns: Iterable[tuple[str, re.Pattern[bytes]]] = (),
                 rank_patterns: Iterable[re.Pattern[bytes]] = (), words: SymptomWords | None = None,
                 solo_patterns: Iterable[re.Pattern[bytes]] = ()):
        """``world_size_patterns``: byte regexes with a ``value`` group that declare a world size;
        ``stage_patterns``: (stage, byte regex) pairs of start-up lines, earliest stage first;
        ``rank_patterns``: byte regexes with a ``value`` group, a process announcing its global rank;
        ``words``: the symptom wordings (default: the shipped ``rules/symptoms.yaml``);
        ``solo_patterns``: byte regexes of a process announcing it runs with no distributed world."""
        self.words = words or shipped_words()
        patterns = sorted({p.pattern for p in world_size_patterns})
        self._world = _alternation(patterns) if patterns else None
        stages: dict[str, list[bytes]] = {}
        for stage, pattern in stage_patterns:
            stages.setdefault(stage, []).append(pattern.pattern)
        self._stages = {stage: _alternation(found) for stage, found in stages.items()}
        self._world_values = [re.compile(p) for p in patterns]
        self._ranks = [re.compile(p.pattern) for p in rank_patterns]
        self._solo = [re.compile(p.pattern) for p in solo_patterns]
        self._head: dict[str, bytearray] = {}
        self._tail: dict[str, bytes] = {}
        self._seen: dict[str, int] = {}

    def observe(self, path: str, data: bytes) -> None:
        """Show the scanner the next bytes of ``path`` (whole lines); keeps only the two windows."""
        seen = self._seen.get(path, 0)
        head = self._head.setdefault(path, bytearray())
        if seen < HEAD:
            take = data[: HEAD - seen]
            cut = take.rfind(b"\n") + 1 if len(take) < len(data) else len(take)
            head += take[:cut]
            rest = data[cut:]
        else:
            rest = data
        self._seen[path] = seen + len(data)
        if rest:
            tail = (self._tail.get(path, b"") + rest[-TAIL:])[-TAIL:]
            start = tail.find(b"\n") + 1 if len(tail) == TAIL else 0
            self._tail[path] = tail[start:]

    def windows(self) -> list[bytes]:
        """The text looked at, file by file: head, then the tail when the file went past the head."""
        out = []
        for path, head in self._head.items():
            out.append(bytes(head))
            if self._tail.get(path):
                out.append(self._tail[path])
        return out

    def facts(self) -> dict[str, Any]:
        """The symptom facts of everything observed so far (absent when the log gives no evidence)."""
        windows = self.windows()
        facts: dict[str, Any] = {}
        words = self.words
        loss = [b for w in windows for b in words.loss_line.findall(w) if not words.bar.search(b)]
        progress = [b for w in windows for b in words.progress_line.findall(w)
                    if not (words.bar.search(b) or words.has_loss.search(b))]
        facts.update(_copies("log.loss", loss, words.mask))
        facts.update(_copies("log.progress", progress, words.mask))
        last = None
        for window in windows:
            for last in words.position.finditer(window):
                pass
            if last is not None:
                last_pos = (int(last["step"]), int(last["total"]))
        if last is not None and 0 < last_pos[1]:
            facts["log.progress_last_step"], facts["log.progress_last_total"] = last_pos
            facts["log.progress_last_fraction"] = round(min(last_pos[0] / last_pos[1], 1.0), 4)
        spent = self._elapsed_over_timeout(windows)
        if spent is not None:
            facts["log.progress_elapsed_over_timeout"] = spent
        facts.update(self._rates(windows))
        twice = self._ranks_announced_twice(windows)
        if twice:
            facts["log.ranks_announced_twice"] = twice
        solo = self._solo_processes(windows)
        if solo:
            facts["log.solo_processes"] = solo
        repeated = _repeated_in_place(windows, words)
        if repeated:
            facts["log.lines_repeated_in_place"] = repeated
        stage = self._ended_in_stage()
        if stage:
            facts["log.ended_in_stage"] = stage
        return facts

    def _elapsed_over_timeout(self, windows: list[bytes]) -> float | None:
        """The running time of the last progress bar drawn before the first timed-out wait, over that
        wait's timeout (both in the same window); None without a timeout value or a bar before it."""
        for window in windows:
            hits = [m for pattern in self.words.timeout_value for m in [pattern.search(window)] if m]
            if not hits:
                continue
            first = min(hits, key=lambda m: m.start())
            timeout = int(first["ms"]) / 1000 if "ms" in first.re.groupindex else int(first["s"])
            bars = [m for pattern in self.words.elapsed for m in pattern.finditer(window, 0, first.start())]
            if timeout <= 0 or not bars:
                return None
            last = max(bars, key=lambda m: m.start())
            seconds = 0
            for part in last["elapsed"].split(b":"):
                seconds = seconds * 60 + int(part)
            return round(seconds / timeout, 3)
        return None

    def _ended_in_stage(self) -> str | None:
        """The earliest stage some file ends in, unless a file went on past its start-up (or never showed one)."""
        order = list(self._stages)
        ended = []
        for path, head in self._head.items():
            window = self._tail.get(path) or bytes(head)
            last = None
            for stage, regex in self._stages.items():
                for match in regex.finditer(window):
                    if last is None or match.start() >= last[0]:
                        last = (match.start(), stage)
            if last is None:
                if self.words.went_on.search(window):
                    return None
                continue
            after = window[window.find(b"\n", last[0]) + 1:] if b"\n" in window[last[0]:] else b""
            if self.words.went_on.search(after) or sum(1 for line in after.split(b"\n") if line.strip()) > MAX_AFTER_STAGE:
                return None
            ended.append(last[1])
        return min(ended, key=order.index) if ended else None

    def _rates(self, windows: list[bytes]) -> dict[str, Any]:
        """Per-rank rates by the world size declared before them; the ratio of the extremes.

        Rates of the whole job (samples/s without "per GPU") are divided by the world size; the
        two world sizes are compared in a unit both show (iterations first)."""
        if self._world is None:
            return {}
        by_size: dict[int, dict[str, list[float]]] = {}

        def add(size: int | None, text: bytes) -> None:
            if size is not None and size > 0:
                for unit, rate in _rates(text, size, self.words.rate):
                    by_size.setdefault(size, {}).setdefault(unit, []).append(rate)

        size = None
        for window in windows:
            marks = [(m.start(), self._world_size(m.group(0))) for m in self._world.finditer(window)]
            add(size, window[: marks[0][0]] if marks else window)
            for (start, value), nxt in zip(marks, [m[0] for m in marks[1:]] + [len(window)]):
                size = value if value is not None else size
                add(size, window[start:nxt])
        if len(by_size) < 2:
            return {}
        low, high = min(by_size), max(by_size)
        unit = next((u for u in ("it", *sorted(by_size[low])) if u in by_size[low] and u in by_size[high]), None)
        if unit is None:
            return {}
        ratio = statistics.median(by_size[high][unit]) / statistics.median(by_size[low][unit])
        return {"log.rate_world_sizes": [low, high], "log.rate_scaling": round(ratio, 3)}

    def _ranks_announced_twice(self, windows: list[bytes]) -> list[int]:
        """Ranks announced more than once, when as many announcements as the world size left a rank unannounced.

        Only for a log of one world size whose processes announced at least two different ranks: a
        restart announces every rank again (no rank left out), one node's part of a bigger world
        announces fewer ranks than the world size, and two runs (of different sizes, or where only
        rank 0 prints) are not one world; none of them is reported."""
        counts: Counter[int] = Counter()
        worlds: set[int] = set()
        for window in windows:
            for pattern in self._ranks:
                counts.update(int(m["value"]) for m in pattern.finditer(window))
            for pattern in self._world_values:
                worlds.update(int(m["value"]) for m in pattern.finditer(window))
        twice = sorted(rank for rank, n in counts.items() if n > 1)
        if not twice or len(worlds) != 1 or len(counts) < 2:
            return []
        world = worlds.pop()
        if sum(counts.values()) < world or all(r in counts for r in range(world)):
            return []
        return twice

    def _solo_processes(self, windows: list[bytes]) -> int:
        """The longest run of "running alone" announcements with no training or failure line between
        two of them (several copies starting together); 0 when no run has two. A second run appended
        to the log, or a restart after a failure, has training or error lines before it and starts a
        run of its own."""
        best = 0
        for window in windows:
            starts = sorted(m.start() for pattern in self._solo for m in pattern.finditer(window))
            run = 1
            for before, after in zip(starts, starts[1:]):
                line_end = window.find(b"\n", before)
                between = line_end if line_end != -1 and line_end < after else after
                run = 1 if self.words.went_on.search(window, between, after) else run + 1
                best = max(best, run)
        return best if best >= 2 else 0

    def _world_size(self, text: bytes) -> int | None:
        for pattern in self._world_values:
            match = pattern.search(text)
            if match:
                return int(match["value"])
        return None


def _alternation(patterns: list[bytes]) -> re.Pattern[bytes]:
    """One regex matching any of ``patterns`` (their named groups dropped, so they can repeat)."""
    return re.compile(b"|".join(b"(?:%s)" % re.sub(rb"\(\?P<\w+>", b"(", p) for p in patterns))


def _rates(text: bytes, size: int, rate: re.Pattern[bytes]) -> list[tuple[str, float]]:
    """(unit, per-rank rate) of every ``rate`` match in ``text``: ``s/it`` inverted, job-wide rates divided by ``size``."""
    out = []
    for match in rate.finditer(text):
        number = float(match["value"] or match["keyed"])
        if number <= 0:
            continue
        if match["key"]:
            unit = match["key"].lower()
            per_rank = b"per gpu" in unit
        else:
            unit = match["unit"].lower()
            per_rank = unit in (b"it/s", b"s/it") or bool(match["per"])
        if unit == b"s/it":
            unit, number = b"it/s", 1 / number
        name = "it" if unit == b"it/s" else re.match(rb"(?:train_)?([a-z]+)", unit)[1].decode()
        out.append((name, number if per_rank else number / size))
    return out


def _repeated_in_place(windows: list[bytes], words: SymptomWords) -> int | None:
    """k when every non-blank line of the windows comes in a run of exactly k (>= 2) identical lines in a row
    (a window's first and last run may be cut by the window), with at least :data:`MIN_REPEATED_RUNS` runs, of
    which at least :data:`MIN_OTHER_RUNS` tell one process: lines that are neither training nor progress lines
    (start-up lines, a device's name), or lines under a rank label or a time stamp (two ranks print neither
    the same label nor the same millisecond). That is the whole output printed k times over, line by line,
    not k ranks printing the same training values (NVIDIA/apex#840: 8 ranks, each loss value 8 times in a row
    and nothing else)."""
    runs = [run for window in windows for run in [(line, len(list(group))) for line, group in
                                                 groupby(line.strip() for line in window.split(b"\n") if line.strip())][1:-1]]
    if len(runs) < MIN_REPEATED_RUNS or runs[0][1] < 2 or any(count != runs[0][1] for _, count in runs):
        return None

    def one_process(line: bytes) -> bool:
        if not (words.loss_line.match(line) or words.progress_line.match(line)):
            return True
        told = split_prefix(line.decode("utf-8", "replace"), words=words)
        return told.rank is not None or told.timestamp is not None

    return runs[0][1] if sum(one_process(line) for line, _ in runs) >= MIN_OTHER_RUNS else None


def _copies(prefix: str, bodies: list[bytes], mask: re.Pattern[bytes]) -> dict[str, Any]:
    """How often each distinct line (``mask`` matches masked) was printed: the commonest count and its share."""
    if not bodies:
        return {}
    counts = Counter(mask.sub(b"#", b"\n".join(bodies[:MAX_LINES])).split(b"\n"))
    by_copies = Counter(counts.values())
    copies, lines = max(by_copies.items(), key=lambda kv: (kv[1], kv[0]))
    return {f"{prefix}_lines": len(counts), f"{prefix}_line_copies": copies,
            f"{prefix}_line_copies_share": round(lines / len(counts), 3)}
