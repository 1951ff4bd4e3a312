"""The log analyzer: stream lines, match signatures, attribute ranks, pick the root cause.

``LogAnalyzer(rules)`` is fed one line at a time (``feed``) or whole files (``feed_file``,
which reads big binary chunks and only decodes the lines the prefilter flags), and
``facts()`` returns the hit facts ``log.<finding-id>`` plus the informational facts. Memory
is bounded by the number of distinct (signature, rank) pairs, never by the log's size.
"""

from __future__ import annotations

import gzip
import zlib
import io
import re
import sys
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import IO, Any, Iterable

from troubleshooter.logs.blocks import ANCHORS as BLOCK_ANCHORS
from troubleshooter.logs.blocks import BlockTracker
from troubleshooter.logs.crossrank import count_facts, labelled_ranks, stuck_rank_facts
from troubleshooter.logs.factscan import FactScan
from troubleshooter.logs.framing import repair, strip_ansi
from troubleshooter.logs.lineprefix import may_carry_timestamp, split_prefix
from troubleshooter.logs.prefilter import Prefilter
from troubleshooter.logs.signatures import Signature, compile_signatures
from troubleshooter.logs.symptoms import RANK_FACT, SOLO_FACT, STAGE_FACT, SymptomScanner
from troubleshooter.logs.symptomwords import words_of

CHUNK = 4 << 20          # bytes read at a time
MAX_LINE = 1 << 20       # a "line" longer than this (progress bars, binary junk) is cut
MAX_UNIQUE = 50          # values kept per unique-collecting fact
MAX_HITS = 4096          # distinct (finding, signature, rank) hits kept
DETAIL_CHARS = 300
CHAIN_LINES = 120        # how far a chained exception reaches back and forward from its marker line
BLOCK = -1               # prefilter payload of the block tracker's anchors
MIN_BATCH = 16           # candidate lines of one signature set in a chunk worth one joined search (_inert)
MAX_RECORD_LINES = 8     # lines of one rank's record in torchrun's failure summary (time .. traceback)
MAX_TEARDOWN_LINES = 4096  # exit lines of launcher summary records kept
MAX_TAIL_FAILURES = 32     # recent ``tail`` failure lines kept per file (only the last lines can count)


@dataclass
class _Hit:
    finding: str
    sig: Signature
    rank: int | None
    path: str
    line: int
    order: float
    seq: int
    detail: str
    vars: dict[str, Any]
    priority: int = 0
    severity: str | None = None
    count: int = 1
    outer: bool = False  # raised while handling an earlier exception that has its own hit: not the root cause
    echo: bool = False   # a downstream effect of another failure (the signature's, or its refinement's)

    def as_fact(self) -> dict[str, Any]:
        hit = {"detail": self.detail, "path": self.path, "line": self.line, "rank": self.rank,
               "vars": dict(self.vars), "order": self.order, "source": "log", "finding": self.finding,
               "signature": self.sig.id}
        if self.count > 1:
            hit["count"] = self.count
        if self.severity:
            hit["severity"] = self.severity
        if self.echo:
            hit["echo"] = True
        return hit


@dataclass
class _Context:
    """Where a context signature last matched, per file, and on which ranks."""

    last_line: dict[str, int] = field(default_factory=dict)
    ranks: set = field(default_factory=set)
    vars: dict[str, Any] = field(default_factory=dict)


class LogAnalyzer:
    """Streaming analyzer over the signatures of a rule set (``RuleSet.signatures``)."""

    def __init__(self, rules: Any = None, signatures: Iterable[Signature] | None = None, engine: str | None = None):
        """Use ``rules.signatures`` (a loaded RuleSet) or precompiled ``signatures``; ``engine`` picks the
        prefilter's (``re2``/``stdlib``, default: the fastest installed)."""
        self.signatures = list(signatures) if signatures is not None else compile_signatures(rules.signatures)
        words = words_of(rules)
        anchors: dict[str, list[int]] = {}
        presence: dict[str, list[int]] = {}
        for index, sig in enumerate(self.signatures):
            for literal in sig.anchors:
                (presence if sig.fact else anchors).setdefault(literal, []).append(index)
        for literal in (*BLOCK_ANCHORS, *words.exit_anchors):
            anchors.setdefault(literal, []).append(BLOCK)
        self.prefilter = Prefilter(anchors, presence, engine)
        self._fact_scans = {(sig.bregex.pattern, sig.collect): FactScan(sig, self.prefilter.engine)
                            for sig in self.signatures if sig.fact}
        # the prefilter matches pieces of anchors; a candidate must contain a whole one
        self._literals: dict[int, tuple[bytes, ...]] = {}
        for literal, payload in [*anchors.items(), *presence.items()]:  # one literal may be both kinds
            for index in payload:
                self._literals[index] = self._literals.get(index, ()) + (literal.encode("utf-8"),)
        self.blocks = BlockTracker(words)
        # finding signatures that another's refine names: remembered like context signatures too
        self._refining = {ref.after for sig in self.signatures for ref in sig.refine}
        self.symptoms = SymptomScanner((s.bregex for s in self.signatures if (s.fact or "").startswith("log.world_size")),
                                       ((s.fact[len(STAGE_FACT):], s.bregex) for s in self.signatures
                                        if (s.fact or "").startswith(STAGE_FACT)),
                                       (s.bregex for s in self.signatures if s.fact == RANK_FACT), words,
                                       (s.bregex for s in self.signatures if s.fact == SOLO_FACT))
        self._hits: dict[tuple, _Hit] = {}
        self._contexts: dict[str, _Context] = {}
        self._chains: dict[str, tuple[int, int | None]] = {}  # path -> (line, rank) of the last chain marker
        self._exit_lines: set[tuple[str, int]] = set()  # (path, line) a ``teardown`` context signature matched
        self._failure_line: dict[str, Any] | None = None  # the first ``failure`` signature line (no ``tail``)
        self._tail_failures: dict[str, list[dict[str, Any]]] = {}  # path -> recent ``tail`` failure lines
        self._tail_counts: dict[tuple[str, str], int] = {}  # (signature, path) -> lines a ``tail`` one matched
        self._facts: dict[str, Any] = {}
        self._seq = 0              # global line counter across all inputs
        self._line_no: dict[str, int] = {}
        self._last_ts: dict[str, float] = {}
        self._year = 1970
        self.files: list[str] = []

    # ---- input ---------------------------------------------------------------------------

    def feed(self, line: str, path: str = "<stream>") -> list[dict[str, Any]]:
        """Analyse the next line of ``path``; return the hits this line produced (new or repeated)."""
        self._note_file(path)
        self._line_no[path] += 1
        self._seq += 1
        raw = line.encode("utf-8", "replace")
        if b"\x1b" in raw:  # terminal colours
            raw = strip_ansi(raw)
            line = raw.decode("utf-8", "replace")
        self.symptoms.observe(path, raw.rstrip(b"\r\n") + b"\n")
        payloads = self._confirmed(raw, self.prefilter.line_payloads(raw))
        if self.blocks.open:
            payloads.add(BLOCK)
        if not payloads:
            return []
        return self._line(line.rstrip("\r\n"), payloads, path, self._line_no[path])

    def feed_file(self, stream: IO[bytes], path: str) -> None:
        """Analyse a whole binary stream; only lines the prefilter flags are decoded. Each block is read
        into one reused buffer (a bytearray) after the previous block's unfinished line, and the buffer
        is cut at its last newline in place: no block is copied or freshly allocated on the way."""
        self._note_file(path)
        data, carry, cut_short, first = bytearray(), b"", False, True
        while True:
            start = len(carry)
            if len(data) < start + CHUNK:
                data += bytes(start + CHUNK - len(data))
            del data[start + CHUNK:]
            data[:start] = carry
            read = stream.readinto(memoryview(data)[start:])
            if not read:
                break
            del data[start + read:]
            if first or data.startswith(b"{") or data.find(b"\x1b", start) >= 0:  # what framing.repair may change:
                # a paste, a collector's JSON lines, colours
                data[start:] = repair(bytes(data[start:]), first and read < CHUNK, self.symptoms.words, self)
            first = False
            cut = data.rfind(b"\n") + 1
            if cut == 0 and len(data) > MAX_LINE:  # an over-long line: analysed in pieces, counted once
                data += b"\n"
                self._chunk(data, path)
                self._line_no[path] -= 1
                self._seq -= 1
                cut_short, carry = True, b""
                continue
            carry = bytes(data[cut:])
            del data[cut:]
            if data:
                self.symptoms.observe(path, data)
                self._chunk(data, path)
                cut_short = False
        if carry:
            carry += b"\n"
            self.symptoms.observe(path, carry)
            self._chunk(carry, path)
        elif cut_short:
            self._line_no[path] += 1
            self._seq += 1

    def candidates(self, texts: list[str]) -> list[frozenset]:
        """For each of ``texts``, the signatures (no fact ones) whose anchors it holds (``spanning.Reader``)."""
        out = []
        for text in texts:
            raw = text.encode("utf-8", "surrogateescape")
            payloads = self._confirmed(raw, self.prefilter.line_payloads(raw))
            out.append(frozenset(p for p in payloads if p != BLOCK and not self.signatures[p].fact))
        return out

    def matching(self, text: str, among: frozenset | None = None) -> frozenset:
        """The signatures of ``among`` (default: :meth:`candidates`) that match ``text`` read as one line (as
        :meth:`_line` reads it: a failure or context wording may stand in the prefixes, a logger's level)."""
        among = self.candidates([text])[0] if among is None else among
        if not among:
            return frozenset()
        body = split_prefix(text, self._year, self.symptoms.words).body
        return frozenset(p for p in among if _search(self.signatures[p], body, text) is not None)

    def _confirmed(self, raw: bytes, payloads: set[int]) -> set[int]:
        """The payloads whose whole anchor literal is in the line (pieces can match by accident)."""
        return {p for p in payloads if any(literal in raw for literal in self._literals[p])}

    def _inert(self, data: bytes, candidates: list[tuple[int, set[int]]]) -> set[int]:
        """Candidate lines that surely do nothing, found in bulk: the many lines of a chunk that share one
        set of context-free signatures (an NCCL start-up line each rank prints) are joined and searched
        once; when no signature and no clock is found in the whole text, none is in any of its lines."""
        batches: dict[frozenset, list[int]] = {}
        for start, payloads in candidates:
            key = frozenset(payloads)
            batch = batches.get(key)
            if batch is None:
                batch = batches[key] = []
            batch.append(start)
        inert: set[int] = set()
        for payloads, starts in batches.items():
            if len(starts) < MIN_BATCH or BLOCK in payloads or not all(self.signatures[p].context_free for p in payloads):
                continue
            ends = [data.find(b"\n", start) for start in starts]
            text = b"\n".join(data[start:end if end >= 0 else len(data)] for start, end in zip(starts, ends))
            text = text.decode("utf-8", "replace")
            if not may_carry_timestamp(text) and not any(self.signatures[p].regex.search(text) for p in payloads):
                inert.update(starts)
        return inert

    def _may_act(self, text: str, payloads: set[int]) -> bool:
        """Whether analysing a candidate line can change anything: it feeds the block tracker, carries a
        timestamp (the order of later hits), or a signature may match it. A context-free pattern that
        finds nothing in the whole line finds nothing in its body either, so most false candidates
        (an anchor without the rest of its message) stop here, before the prefix is split."""
        return BLOCK in payloads or may_carry_timestamp(text) or any(
            not sig.context_free or sig.regex.search(text) for sig in map(self.signatures.__getitem__, payloads))

    def _note_file(self, path: str) -> None:
        if path not in self._line_no:
            self._line_no[path] = 0
            self.files.append(path)

    def _chunk(self, data: bytes, path: str) -> None:
        base, seq_base = self._line_no[path], self._seq
        pos, line_no = 0, base

        def end_of(start: int) -> int:
            end = data.find(b"\n", start)
            return len(data) if end == -1 else end

        def analyse(start: int, end: int, payloads: set[int], text: str | None = None) -> None:
            nonlocal pos, line_no
            line_no += data.count(b"\n", pos, start)
            pos = start
            self._seq = seq_base + line_no - base + 1
            if text is None:
                text = data[start:end].decode("utf-8", "replace").rstrip("\r")
            self._line(text, payloads, path, line_no + 1)

        def read_block(start: int) -> int:
            """Inside a launcher summary every line counts; returns where candidate scanning resumes."""
            while self.blocks.open and start < len(data):
                end = end_of(start)
                raw = data[start:end]
                analyse(start, end, self._confirmed(raw, self.prefilter.line_payloads(raw)) | {BLOCK})
                start = end + 1
            return start

        candidates, present = self.prefilter.scan(data)
        scanned: dict[tuple[bytes, str], list[bytes]] = {}
        for index in sorted(present):  # NCCL INFO facts: one bulk scan per pattern present in the chunk
            sig = self.signatures[index]
            if not self._wants(sig):
                continue
            key = (sig.bregex.pattern, sig.collect)
            if key not in scanned:
                scanned[key] = self._fact_scans[key].values(data)
            for value in scanned[key]:
                self._collect(sig, sig.typed(value.decode("utf-8", "replace").strip()))
        resume = read_block(0)
        blocks, literals, inert = self.blocks, self._literals, self._inert(data, candidates)
        for start, payloads in candidates:  # the hot loop: one pass per candidate line, kept flat
            if start < resume or start in inert:
                continue
            end = data.find(b"\n", start)
            if end < 0:
                end = len(data)
            raw = data[start:end]
            payloads = {p for p in payloads if any(literal in raw for literal in literals[p])}
            if payloads:
                text = raw.decode("utf-8", "replace").rstrip("\r")
                if self._may_act(text, payloads):
                    analyse(start, end, payloads, text)
            resume = read_block(end + 1) if blocks.open else end + 1
        total = line_no - base + data.count(b"\n", pos)  # lines before ``pos`` are counted already
        self._line_no[path] = base + total
        self._seq = seq_base + total

    # ---- matching ------------------------------------------------------------------------

    def _line(self, text: str, payloads: set[int], path: str, line_no: int) -> list[dict[str, Any]]:
        prefix = split_prefix(text, self._year, self.symptoms.words)
        if prefix.timestamp is not None:
            if prefix.timestamp > 86400 * 366 * 20:
                self._year = datetime.fromtimestamp(prefix.timestamp, timezone.utc).year
            self._last_ts[path] = prefix.timestamp
        order = self._last_ts.get(path, float(self._seq))
        body = prefix.body
        if BLOCK in payloads:
            self.blocks.feed(body, prefix.rank, path, line_no)
        line_rank = prefix.rank if prefix.rank is not None else self.blocks.context_rank()
        matched: list[tuple[Signature, re.Match, dict[str, Any], int | None]] = []
        inner_from = -1  # where the innermost stated reason starts (after the last wrapper), if any
        for index in sorted(p for p in payloads if p != BLOCK):
            sig = self.signatures[index]
            match = _search(sig, body, text)
            if match is None:
                continue
            values = sig.extract(match)
            rank = values["rank"] if isinstance(values.get("rank"), int) else line_rank
            if sig.wrapper and sig.inner == "before":
                self._chains[path] = (line_no, rank)
            elif sig.wrapper:
                inner_from = max(inner_from, match.end())
            elif sig.failure:
                self._note_failure(sig, body, rank, path, line_no)
            elif sig.context:
                if sig.teardown and len(self._exit_lines) < MAX_TEARDOWN_LINES:
                    self._exit_lines.add((path, line_no))
                self._remember(sig, path, line_no, rank, values)
            elif sig.fact:
                self._collect(sig, values.get("value"))
            else:
                if sig.id in self._refining:
                    self._remember(sig, path, line_no, rank, values)
                matched.append((sig, match, values, rank))
        if inner_from >= 0 and any(m.start() >= inner_from for _, m, _, _ in matched):
            matched = [item for item in matched if item[1].start() >= inner_from]  # the reason beats its wrapper
        produced: list[dict[str, Any]] = []
        findings_on_line: set[str] = set()
        for sig, _, values, rank in matched:
            if sig.finding not in findings_on_line:
                findings_on_line.add(sig.finding)
                produced.append(self._record(sig, rank, values, body, path, line_no, order))
        return [p for p in produced if p]

    def _note_failure(self, sig: Signature, body: str, rank: int | None, path: str, line_no: int) -> None:
        """Keep a line that shows the run failed (a ``failure`` signature): the first one, or the recent ones
        of a ``tail`` signature (only those among their file's last lines count, see :meth:`_failure_evidence`)."""
        record = {"text": body[:500], "rank": rank, "path": path, "line": line_no, "tail": sig.tail, "sig": sig.id}
        if not sig.tail:
            if self._failure_line is None:
                self._failure_line = record
            return
        self._tail_counts[(sig.id, path)] = self._tail_counts.get((sig.id, path), 0) + 1
        recent = self._tail_failures.setdefault(path, [])
        recent.append(record)
        if len(recent) > MAX_TAIL_FAILURES:
            del recent[0]

    def _failure_evidence(self) -> dict[str, Any] | None:
        """The first line that shows the run failed: a ``failure`` signature's, or a ``tail`` one's that is
        among the last lines of its file (the run ended there) and not on most of that file's lines (a log
        collector's level on every line)."""
        ends = [r for path, recent in self._tail_failures.items() for r in recent
                if self._line_no.get(path, 0) - r["line"] < r["tail"]
                and not _most_lines(self._tail_counts[(r["sig"], path)], self._line_no[path])]
        found = [r for r in [self._failure_line, *ends] if r is not None]
        return min(found, key=lambda r: (self.files.index(r["path"]), r["line"])) if found else None

    def _remember(self, sig: Signature, path: str, line_no: int, rank: int | None, values: dict[str, Any]) -> None:
        """Note where ``sig`` matched, for the refinements that name it."""
        ctx = self._contexts.setdefault(sig.id, _Context())
        ctx.last_line[path] = line_no
        if len(ctx.ranks) < 1024:
            ctx.ranks.add(rank)
        ctx.vars.update(values)

    def _wants(self, sig: Signature) -> bool:
        """Whether a fact signature can still change its fact (a ``first`` fact is set once, a list is capped)."""
        have = self._facts.get(sig.fact)
        if sig.collect == "first":
            return have is None
        return sig.collect == "last" or have is None or len(have) < MAX_UNIQUE

    def _collect(self, sig: Signature, value: Any) -> None:
        if value is None:
            return
        if sig.collect == "first":
            self._facts.setdefault(sig.fact, value)
            return
        if sig.collect == "last":
            self._facts[sig.fact] = value
            return
        values = self._facts.setdefault(sig.fact, [])
        if value not in values and len(values) < MAX_UNIQUE:
            values.append(value)

    def _refined(self, sig: Signature, path: str, line_no: int) -> tuple[str, dict[str, Any], int, str | None, bool]:
        """The finding, extra vars, priority, severity and echo of a hit of ``sig`` here (after its refinements)."""
        for ref in sig.refine:
            ctx = self._contexts.get(ref.after)
            if ctx is None or path not in ctx.last_line:
                continue
            near = ref.within == 0 or line_no - ctx.last_line[path] <= ref.within
            if near and len(ctx.ranks) >= ref.ranks:
                priority = sig.priority if ref.priority is None else ref.priority
                echo = sig.echo if ref.echo is None else ref.echo
                return (ref.finding, dict(ctx.vars), priority,
                        ref.severity or (sig.severity if ref.priority is None else None), echo)
        return (sig.finding or "") if sig.alone else "", {}, sig.priority, sig.severity, sig.echo

    def _record(self, sig: Signature, rank: int | None, values: dict[str, Any], body: str, path: str,
                line_no: int, order: float) -> dict[str, Any]:
        finding, extra, priority, severity, echo = self._refined(sig, path, line_no)
        if not finding:  # an ``alone: false`` line outside every context that gives it meaning
            return {}
        key = (finding, sig.id, rank)
        hit = self._hits.get(key)
        if hit is not None:
            hit.count += 1
            return hit.as_fact()
        if len(self._hits) >= MAX_HITS:
            return {}
        merged = {**extra, **values}
        if rank is not None:
            merged.setdefault("rank", rank)
        hit = _Hit(finding, sig, rank, path, line_no, order, self._seq, body[:DETAIL_CHARS], merged, priority, severity,
                   outer=self._chained(path, rank, line_no), echo=echo)
        self._hits[key] = hit
        return hit.as_fact()

    def _chained(self, path: str, rank: int | None, line_no: int) -> bool:
        """A hit just after a chain marker whose earlier exception (same file and rank) already has a hit."""
        chain = self._chains.get(path)
        if chain is None or line_no - chain[0] > CHAIN_LINES or None not in (rank, chain[1]) and rank != chain[1]:
            return False
        return any(h.path == path and chain[0] - CHAIN_LINES <= h.line < chain[0] and h.priority > 0
                   and not h.echo and (None in (rank, h.rank) or h.rank == rank) for h in self._hits.values())

    # ---- results ---------------------------------------------------------------------------

    def _kept_hits(self) -> tuple[list[_Hit], list[_Hit]]:
        """Split hits into kept and suppressed.

        A generic hit yields to a hit of another finding with a higher priority; a generic echo
        also yields to any specific non-echo failure (it is that failure's downstream effect).
        """
        hits = sorted(self._hits.values(), key=lambda h: h.seq)
        top: dict[str, int] = {}            # finding -> highest priority among its hits
        specific: dict[str, bool] = {}      # finding -> has a specific non-echo failure hit
        for h in hits:
            if h.priority > 0:
                top[h.finding] = max(top.get(h.finding, 0), h.priority)
                specific[h.finding] = specific.get(h.finding, False) or not (h.echo or h.sig.generic)

        def explained(hit: _Hit) -> bool:
            others = [f for f in top if f != hit.finding]
            return any(top[f] > hit.priority or (hit.echo and specific[f]) for f in others)

        kept = [h for h in hits if not (h.sig.generic and explained(h))]
        suppressed = [h for h in hits if h not in kept]
        return kept, suppressed

    def _failures(self) -> list[dict[str, Any]]:
        """The launchers' failure records, each with the failed rank's own exception where the log has it.

        A record whose traceback is a placeholder ("To enable traceback see: ...") takes the rank's
        last exception; the first observed failure of a log whose worker lines carry no rank prefix
        (torch < 2.2, or an error raised before the process group existed) takes the log's first
        exception that ended a traceback, with its innermost file:line.
        """
        out = []
        for failure in self.blocks.failures:
            data = failure.to_dict()
            own = self.blocks.exceptions.get(failure.rank) if failure.rank is not None else None
            tb = data.get("traceback", "")
            placeholder = not tb or tb.startswith(("To enable traceback", "Signal ", "<N/A>")) or "Traceback" in tb
            first = self.blocks.first_exception or self.blocks.earliest_exception
            if own is None and placeholder and failure.root and first and first.get("rank") is None:
                own = first
            if own and placeholder:
                data["traceback"] = own["text"]
                data["traceback_line"] = own["line"]
                if own.get("where"):
                    data["where"] = own["where"]
            out.append(data)
        return out

    def facts(self) -> dict[str, Any]:
        """All facts so far: ``log.<finding-id>`` hit lists and the informational ``log.*`` facts."""
        kept, suppressed = self._kept_hits()
        failures = self._failures()
        root, echoes_of_root = self._root_cause(kept, failures)
        root = root or self._uncaught_exception()
        if echoes_of_root:  # the echoes are the root rank's downstream effects: not reported apart
            suppressed = sorted(suppressed + [h for h in kept if h.echo or h.outer], key=lambda h: h.seq)
            kept = [h for h in kept if not (h.echo or h.outer)]
        exit_codes: dict[str, int] = {}
        by_rank: dict[int, dict[str, Any]] = {}
        for failure in failures:
            if failure.get("rank") is not None and failure.get("exit_code") not in (None, 0):
                exit_codes.setdefault(str(failure["rank"]), failure["exit_code"])
                by_rank.setdefault(failure["rank"], failure)
        facts: dict[str, Any] = {}  # fresh dicts: callers may keep or change them
        for hit in kept:
            fact = hit.as_fact()
            failure = by_rank.get(hit.rank)  # what the launcher said about the rank completes the vars
            for key in ("exit_code", "signal", "host") if failure else ():
                if key in failure:
                    fact["vars"].setdefault(key, failure[key])
            facts.setdefault(f"log.{hit.finding}", []).append(fact)
        for key, value in self._facts.items():
            facts[key] = list(value) if isinstance(value, list) else value
        facts.update(self.symptoms.facts())
        facts.update(count_facts(facts))
        known = [f.get("rank") for f in failures] + list(self.blocks.exceptions)
        facts.update(stuck_rank_facts(self._hits.values(), known, lambda: labelled_ranks(self.symptoms.windows()),
                                      self.symptoms.words))
        crashed = {h.rank for h in kept if h.rank is not None and not h.echo and h.priority >= 80}
        facts["log.failed_ranks"] = sorted({int(r) for r in exit_codes} | crashed)
        facts["log.exit_codes"] = exit_codes
        if failures:
            facts["log.failures"] = failures
        if suppressed:
            facts["log.suppressed"] = [{"id": h.finding, "rank": h.rank, "line": h.line, "path": h.path,
                                        "signature": h.sig.id} for h in suppressed]
        if root:
            facts["log.root_cause"] = root
            if root["id"] is None and root.get("rank") is not None and failures:
                facts["log.rank-crashed"] = [crash_hit(root)]
                _drop_teardown_echoes(facts, failures, root["rank"], self._exit_lines)
            elif root["id"] is None:
                facts["log.unrecognized-failure"] = [unrecognized_hit(root)]
            for hit in facts.get(f"log.{root['id']}") or []:  # the engine puts the root cause first
                if (hit["path"], hit["line"]) == (root.get("path"), root.get("line")):
                    hit["root"] = True
        facts["log.lines"] = self._seq
        facts["log.files"] = list(self.files)
        return facts

    def _root_cause(self, kept: list[_Hit], failures: list[dict[str, Any]]) -> tuple[dict[str, Any] | None, bool]:
        """The first failure in time among the most causal hits; echoes only when nothing else is known. The
        flag is true when the root is another rank's uncaught exception that the echoes followed
        (:meth:`_unexplained_peer_failure`): :meth:`facts` then moves the echoes to the suppressed."""
        candidates = [h for h in kept if h.priority > 0]
        launcher_root = next((f for f in failures if f.get("root") and f.get("rank") is not None), None)
        if launcher_root is not None and not any(h.rank == launcher_root["rank"] for h in candidates):
            # The launcher saw this rank die first and no line of it explains why: the rest are echoes. Unless
            # the workers' lines carry no rank label at all (torch < 2.2, plain prints): then an unlabelled
            # cause (not an echo) may be that rank's own line.
            unlabelled = all(h.rank is None for h in candidates)
            candidates = [h for h in candidates if unlabelled and not (h.echo or h.outer)]
        if candidates:
            best = min(candidates, key=lambda h: (h.echo or h.outer, -h.priority, h.order, h.seq))
            if (best.echo or best.outer) and launcher_root is None and (own := self._unexplained_peer_failure(candidates)):
                return own, True
            return self._hit_root(best, launcher_root), False
        first = next((f for f in failures if f.get("root")), failures[0] if failures else None)
        if first is None:
            return None, False
        root = {"id": None, **{k: first[k] for k in ("rank", "local_rank", "host", "path", "line", "exit_code", "signal",
                                                     "traceback", "where") if k in first}}
        exc = self.blocks.first_exception or self.blocks.earliest_exception
        if exc and "traceback" not in root:
            root.update(traceback=exc["text"], where=exc.get("where"))
        return root, False

    def _unexplained_peer_failure(self, candidates: list[_Hit]) -> dict[str, Any] | None:
        """When only echoes matched, a rank's own uncaught exception that no hit explains, from another rank
        than the echoes' (the store host that died while the others waited on it): that rank failed first, and
        the echoes are its downstream effects."""
        exc = self.blocks.first_exception
        if exc is None or exc.get("rank") is None:
            return None
        echo_ranks = {h.rank for h in candidates}
        if None in echo_ranks or exc["rank"] in echo_ranks:
            return None
        return _exception_root(exc)

    def _hit_root(self, best: _Hit, launcher_root: dict[str, Any] | None) -> dict[str, Any]:
        """The root cause record of hit ``best``."""
        rank = best.rank if best.rank is not None or launcher_root is None else launcher_root["rank"]
        root = {"id": best.finding, "rank": rank, "path": best.path, "line": best.line,
                "detail": best.detail, "signature": best.sig.id}
        tb = self.blocks.exceptions.get(best.rank)
        if tb:
            root["traceback"] = tb["text"]
        return root

    def _uncaught_exception(self) -> dict[str, Any] | None:
        """No hit and no launcher record, but an exception was raised (preferably one that ended a
        traceback), or a traceback was cut before its exception line, or only the launcher's own
        exception (ChildFailedError) is left of the failure, or a line shows the run failed (a
        ``failure`` signature: another tool's non-zero exit, another language's exception)."""
        exc = self.blocks.first_exception or self.blocks.earliest_exception
        if exc is None and self.blocks.dangling_frame is not None:
            frame = self.blocks.dangling_frame
            return {"id": None, "rank": frame["rank"], "path": frame["path"], "line": frame["line"],
                    "traceback": "a traceback whose exception line is missing from the log", "where": frame["where"]}
        exc = exc or self.blocks.launcher_exception or self._failure_evidence()
        if exc is None:
            return None
        return _exception_root(exc)


def _exception_root(exc: dict[str, Any]) -> dict[str, Any]:
    """The root cause record of an exception (or failure line) no hit explains."""
    return {"id": None, "rank": exc.get("rank"), "path": exc["path"], "line": exc["line"],
            "traceback": exc["text"], "where": exc.get("where")}


def _most_lines(count: int, lines: int) -> bool:
    """Whether ``count`` of a file's ``lines`` are most of them."""
    return 2 * count > lines


def _drop_teardown_echoes(facts: dict[str, Any], failures: list[dict[str, Any]], first: int,
                          exit_lines: set[tuple[str, int]]) -> None:
    """After rank ``first`` died first, what the launcher then did to the other ranks is its echo.

    That is the generic exits of other ranks (the SIGTERM torchrun sends them) and any hit read from
    another rank's own record in the launcher's failure summary (its -9 or -15 exit code when torchrun
    killed it; ``exit_lines`` are the record lines a ``teardown`` signature marked as exit lines): both
    move to ``log.suppressed`` instead of reading as second failures.
    """
    records = {(f.get("path"), f["rank"]): f["line"] for f in failures
               if not f.get("root") and f.get("rank") not in (None, first) and f.get("line") is not None}

    def teardown(finding: str, hit: dict[str, Any]) -> bool:
        if hit.get("rank") in (None, first) or hit.get("root"):
            return False
        start = records.get((hit.get("path"), hit.get("rank")))
        in_record = start is not None and 0 <= (hit.get("line") or -1) - start <= MAX_RECORD_LINES \
            and (hit.get("path"), hit.get("line")) in exit_lines
        return in_record or finding == "unrecognized-failure"

    suppressed = facts.setdefault("log.suppressed", [])
    for key in [k for k in facts if k.startswith("log.") and k[4:] not in ("rank-crashed", "suppressed")]:
        hits = facts[key]
        if not isinstance(hits, list) or not all(isinstance(h, dict) and "signature" in h for h in hits):
            continue
        echoes = [h for h in hits if teardown(key[4:], h)]
        if not echoes:
            continue
        suppressed.extend({"id": key[4:], "rank": h.get("rank"), "line": h.get("line"), "path": h.get("path"),
                           "signature": h.get("signature")} for h in echoes)
        kept = [h for h in hits if h not in echoes]
        if kept:
            facts[key] = kept
        else:
            del facts[key]
    if not suppressed:
        del facts["log.suppressed"]


def crash_hit(root: dict[str, Any]) -> dict[str, Any]:
    """A rank that died of its own exception (the launcher's root-cause record), as a hit."""
    trace = (root.get("traceback") or "").strip().splitlines()
    last = trace[-1].strip() if trace else ""
    how = f"exit code {root['exit_code']}" if root.get("exit_code") is not None else "a failure"
    detail = f"rank {root['rank']} died first ({how}{', signal ' + str(root['signal']) if root.get('signal') else ''})"
    where = f" at {root['where']}" if root.get("where") else ""
    return {"detail": detail + (f": {last}" if last else "") + where, "path": root.get("path"), "line": root.get("line"),
            "rank": root["rank"], "source": "log", "root": True, "order": float("-inf"),
            "vars": {k: root[k] for k in ("rank", "exit_code", "signal", "host") if root.get(k) is not None}
            | ({"exception": last} if last else {}) | ({"location": root["where"]} if where else {})}


def unrecognized_hit(root: dict[str, Any]) -> dict[str, Any]:
    """A failure no signature explains: the first failing rank and its first error, as a hit."""
    trace = (root.get("traceback") or "").strip().splitlines()
    exception = trace[-1].strip() if trace else ""
    who = (f"rank {root['rank']}" if root.get("rank") is not None else
           f"local rank {root['local_rank']}" if root.get("local_rank") is not None else "a process")
    how = f" (exit code {root['exit_code']}{', ' + root['signal'] if root.get('signal') else ''})" \
        if root.get("exit_code") is not None else ""
    detail = f"{who} failed{how}" + (f": {exception}" if exception else "") + \
        (f" at {root['where']}" if root.get("where") else "")
    values = {k: root[k] for k in ("rank", "local_rank", "exit_code", "signal", "host") if root.get(k) is not None}
    if exception:
        values["exception"] = exception
    if root.get("where"):
        values["location"] = root["where"]
    return {"detail": detail, "path": root.get("path"), "line": root.get("line"), "rank": root.get("rank"),
            "source": "log", "root": True, "order": float("-inf"), "vars": values}


@dataclass
class LogResult:
    """What ``analyze_paths`` found: the facts (for the engine) and the files read."""

    facts: dict[str, Any]
    files: list[str]


def open_log(path: str) -> IO[bytes]:
    """Open a log for binary reading: ``-`` is standard input, ``.gz`` is decompressed on the fly."""
    if path == "-":
        return sys.stdin.buffer if hasattr(sys.stdin, "buffer") else io.BytesIO(sys.stdin.read().encode())
    if path.endswith(".gz"):
        return gzip.open(path, "rb")
    return open(path, "rb")


def analyze_paths(paths: Iterable[str | Path], rules: Any = None, analyzer: LogAnalyzer | None = None) -> LogResult:
    """Analyse log files (``-`` = stdin, ``.gz`` transparently) in the order given."""
    analyzer = analyzer or LogAnalyzer(rules)
    for path in map(str, paths):
        try:
            stream = open_log(path)
        except OSError as exc:
            raise OSError(f"{path}: {exc.strerror or exc}") from None
        try:
            analyzer.feed_file(stream, "<stdin>" if path == "-" else path)
        except (OSError, EOFError, zlib.error) as exc:  # a truncated or corrupt .gz
            raise OSError(f"{path}: {getattr(exc, 'strerror', None) or exc}") from None
        finally:
            if stream is not getattr(sys.stdin, "buffer", None):
                stream.close()
    return LogResult(facts=analyzer.facts(), files=list(analyzer.files))


def _search(sig: Signature, body: str, text: str) -> re.Match | None:
    """``sig`` in a line's body (its prefixes taken off); a failure or context wording also in the whole line (a
    logger's level, a progress bar glued before it: in the prefix)."""
    match = sig.regex.search(body)
    if match is None and (sig.failure or sig.context) and len(body) < len(text):
        match = sig.regex.search(text)
    return match
