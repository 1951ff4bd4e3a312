"""Log signatures: the YAML library in ``rules/signatures/*.yaml``, validated and compiled.

A signature file holds ``group``, ``doc`` and a list ``signatures``. Each signature has
an ``id``, a ``pattern`` (a Python regex whose named groups become the hit's ``vars``),
a ``note``, and exactly one purpose:

- ``finding: <catalog id>`` with a ``priority`` (root-cause rank) — the line is evidence
  for that finding; optional ``severity``, ``echo``, ``generic``, ``refine``; ``alone: false`` makes
  the line evidence only where one of its refinements applies (a Ctrl-C means a hang only inside a wait);
- ``fact: log.<name>`` with ``collect: first|last|unique`` — an informational fact (NCCL
  version, transports, interfaces, the world size and steps per epoch of the first and last run);
- ``context: true`` — the line is only remembered, for other signatures' ``refine``; with
  ``teardown: true`` it marks a rank's exit line inside a launcher's failure summary (torchrun's
  ``exitcode : -9`` / ``traceback : Signal 9``): what other signatures read there for a rank that did
  not fail first is the launcher's teardown of that rank, not a second failure;
- ``failure: true`` — the line shows that the run failed without saying why (a non-zero exit in some
  tool's wording, another language's uncaught exception, a logger's ERROR record); optional ``tail: N``
  (the line counts only among its file's last N lines: the run ended there). It makes no hit: when no
  hit, launcher record or exception explains the failure, the first such line is the failure the report
  names (``unrecognized-failure``), so a failing run is never reported clean;
- ``wrapper: true`` — the match frames another message (``Original reason for failure was:``,
  ``what():``, ``caused by:``): on that line, hits after the wrapper (the innermost stated reason)
  replace hits before it. ``inner: before`` marks a wrapper that frames the *previous* exception
  (Python's "The above exception was the direct cause of the following exception:"): hits of the
  exception that follows it yield the root cause to hits of the one before.

``examples`` (lines the pattern must match) are checked at load time.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field
from typing import Any, Iterable, Iterator

from troubleshooter.logs.prefilter import context_free, may_match_newline, required_literals

SEVERITIES = ("error", "warning", "info")
ID_RE = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
FACT_RE = re.compile(r"^log\.[a-z][a-z0-9_]*$")
CAPTURE_TYPES = ("int", "str")
COLLECT_MODES = ("first", "last", "unique")
INNER_MODES = ("after", "before")
# Facts the analyzer computes itself; a signature may not claim these names.
RESERVED_FACTS = frozenset({"log.lines", "log.failed_ranks", "log.exit_codes", "log.root_cause", "log.files",
                            "log.tracebacks"})

_FIELDS: dict[str, tuple[tuple[type, ...], bool]] = {
    "id": ((str,), True), "pattern": ((str,), True), "note": ((str,), True),
    "finding": ((str,), False), "fact": ((str,), False), "context": ((bool,), False), "wrapper": ((bool,), False),
    "failure": ((bool,), False), "tail": ((int,), False), "teardown": ((bool,), False),
    "inner": ((str,), False), "collect": ((str,), False), "priority": ((int,), False), "severity": ((str,), False),
    "echo": ((bool,), False), "generic": ((bool,), False), "refine": ((list,), False), "alone": ((bool,), False),
    "captures": ((dict,), False), "examples": ((list,), False),
}
_REFINE_FIELDS: dict[str, tuple[tuple[type, ...], bool]] = {
    "finding": ((str,), True), "after": ((str,), True), "within": ((int,), False), "ranks": ((int,), False),
    "priority": ((int,), False), "severity": ((str,), False), "echo": ((bool,), False),
}
_FILE_FIELDS = {"group": ((str,), True), "doc": ((str,), False), "signatures": ((list,), True)}


@dataclass(frozen=True)
class Refinement:
    """Use ``finding`` instead when context signature ``after`` matched within ``within`` lines before
    (0 = anywhere earlier) on at least ``ranks`` distinct ranks; ``priority``/``severity``, when
    given, replace the signature's (an advisory line becomes a cause in that context); ``echo``, when
    given, replaces the signature's (a crash report that is another failure's takedown there)."""

    finding: str
    after: str
    within: int = 40
    ranks: int = 1
    priority: int | None = None
    severity: str | None = None
    echo: bool | None = None


@dataclass
class Signature:
    """One compiled signature."""

    id: str
    regex: re.Pattern
    note: str
    finding: str | None = None
    fact: str | None = None
    context: bool = False
    teardown: bool = False  # context signatures: a launcher summary's exit line of one rank
    wrapper: bool = False
    failure: bool = False  # a line that shows the run failed, naming no cause (the report's last resort)
    tail: int = 0  # failure signatures: counts only among its file's last ``tail`` lines (0 = anywhere)
    inner: str = "after"  # wrappers: where the reason they frame is (after them on the line, or before them)
    collect: str = "unique"
    priority: int = 0
    severity: str | None = None
    echo: bool = False
    generic: bool = False
    refine: tuple[Refinement, ...] = ()
    alone: bool = True  # finding signatures: False = a hit only where a refinement applies
    captures: dict[str, str] = field(default_factory=dict)
    source: str = ""
    line: int | None = None
    anchors: tuple[str, ...] = ()
    bregex: re.Pattern | None = None  # the pattern over bytes (fact signatures read raw lines)
    context_free: bool = False  # no match in a whole line means none in its body (see prefilter.context_free)

    def typed(self, value: str) -> Any:
        """A bulk-scanned fact value, converted as ``captures: {value: int}`` says."""
        if self.captures.get("value") == "int":
            try:
                return int(value)
            except ValueError:
                return value
        return value

    def bulk_values(self, data: bytes) -> list[bytes]:
        """The raw values a fact signature collects from a chunk of whole lines: ``bregex.findall(data)``,
        cut to what ``collect`` keeps (the first, the last, or each distinct value once). A fact pattern never
        matches a newline, so for a context-free one the last line with a match holds the last match of the
        chunk (read from the end), and with a single anchor only the lines from its first occurrence to its
        last are scanned (NCCL start-up lines early in a long log cost little)."""
        assert self.bregex is not None
        if self.collect == "first":
            match = self.bregex.search(data)
            return [] if match is None else [match.group(1) or b""]
        if self.collect == "last" and self.context_free and self.anchors:
            anchors, end = [a.encode("utf-8") for a in self.anchors], len(data)
            while (at := max(data.rfind(anchor, 0, end) for anchor in anchors)) >= 0:
                start, stop = data.rfind(b"\n", 0, at) + 1, data.find(b"\n", at)
                found = self.bregex.findall(data, start, len(data) if stop < 0 else stop)
                if found:
                    return found[-1:]
                end = start
            return []
        start, stop = 0, len(data)
        if self.context_free and len(self.anchors) == 1:  # only the lines from the first anchor to the last
            anchor = self.anchors[0].encode("utf-8")
            first, last = data.find(anchor), data.rfind(anchor)
            if first < 0:
                return []
            start, stop = data.rfind(b"\n", 0, first) + 1, data.find(b"\n", last)
        found = self.bregex.findall(data, start, len(data) if stop < 0 else stop)
        return found[-1:] if self.collect == "last" else list(dict.fromkeys(found))

    def extract(self, match: re.Match) -> dict[str, Any]:
        """Named groups of ``match`` as typed vars (groups that did not participate are left out)."""
        out: dict[str, Any] = {}
        for name, value in match.groupdict().items():
            if value is None:
                continue
            value = value.strip()
            if self.captures.get(name) == "int":
                try:
                    out[name] = int(value)
                except ValueError:
                    continue
            else:
                out[name] = value
        return out


def _type_name(types: tuple[type, ...]) -> str:
    names = {str: "a string", list: "a list", dict: "a mapping", int: "an integer", bool: "true or false"}
    return " or ".join(names[t] for t in types)


def _fields(data: Any, schema: dict, where: str) -> Iterator[tuple[int | None, str, str, str]]:
    line = getattr(data, "line", None)
    if not isinstance(data, dict):
        yield line, f"expected a mapping, got {type(data).__name__}", "", where
        return
    for key, (types, required) in schema.items():
        if key not in data:
            if required:
                yield line, f"missing required key {key!r}", f"add `{key}:`", where
        elif not isinstance(data[key], types) or (bool not in types and isinstance(data[key], bool)):
            yield _line_of(data, key), f"key {key!r} should be {_type_name(types)}, got {type(data[key]).__name__}", "", where
    for key in data:
        if key not in schema:
            close = difflib.get_close_matches(key, list(schema), n=1)
            yield (_line_of(data, key), f"unknown key {key!r}",
                   f"did you mean {close[0]!r}?" if close else f"allowed keys: {', '.join(schema)}", where)


def _line_of(data: Any, key: Any) -> int | None:
    return data.line_of(key) if hasattr(data, "line_of") else None


def _check_pattern(sig: dict, where: str) -> Iterator[tuple[int | None, str, str, str]]:
    line = _line_of(sig, "pattern")
    try:
        regex = re.compile(sig["pattern"])
    except re.error as exc:
        yield line, f"pattern does not compile: {exc}", "patterns are Python regular expressions", where
        return
    if regex.flags & re.IGNORECASE:
        yield line, "case-insensitive patterns are not supported", "spell out the variants: (?:Killed|killed)", where
    if not required_literals(sig["pattern"]):
        yield (line, "pattern has no literal text of 3+ characters that every match must contain",
               "the analyzer skips lines by such literals; anchor the pattern on a fixed word of the message", where)
    captures = sig.get("captures") or {}
    if isinstance(captures, dict):
        for name, kind in captures.items():
            if name not in regex.groupindex:
                yield (_line_of(captures, name), f"capture {name!r} is not a named group of the pattern",
                       f"named groups: {', '.join(regex.groupindex) or 'none'}", where)
            if kind not in CAPTURE_TYPES:
                yield _line_of(captures, name), f"capture type {kind!r} is not one of {CAPTURE_TYPES}", "", where
    if "fact" in sig:
        yield from _check_fact_pattern(sig["pattern"], regex, line, where)
    for i, example in enumerate(sig.get("examples") or []):
        if not isinstance(example, str) or not regex.search(example):
            yield (sig["examples"].line_of(i) if hasattr(sig["examples"], "line_of") else line,
                   f"example {i} does not match the pattern", "fix the pattern or the example", where)


_CROSSES_LINES = re.compile(r"\\[sDW]|\[\^(?![^\]]*\\n)")


def _check_fact_pattern(pattern: str, regex: re.Pattern, line: int | None, where: str
                        ) -> Iterator[tuple[int | None, str, str, str]]:
    """Fact signatures are scanned over whole chunks: one group, a literal start, no newline matches."""
    if list(regex.groupindex) != ["value"] or regex.groups != 1:
        yield (line, "a fact signature captures exactly one group, named 'value'",
               "write (?P<value>...) around the part to keep and (?:...) for other groups", where)
    if not re.match(r"[^\\()\[.*+?{|^$]", pattern):
        yield (line, "a fact pattern must start with literal text",
               "it is scanned over whole chunks by its leading literal; move alternations after a fixed prefix", where)
    if _CROSSES_LINES.search(pattern) or may_match_newline(pattern):
        yield (line, "a fact pattern must not match across lines (\\s, \\D, \\W, [^...] without \\n)",
               "use a space, an explicit class, or add \\n to the negated class", where)


def validate_signature_file(data: Any, known_findings: Iterable[str] | None = None
                            ) -> Iterator[tuple[int | None, str, str, str]]:
    """Every problem in one signature file as ``(line, message, help, breadcrumb)``.

    ``known_findings`` (catalog ids) enables the finding-id check; without it only the
    shape, the regexes, the captures and the examples are checked.
    """
    known = set(known_findings) if known_findings is not None else None
    problems = list(_fields(data, _FILE_FIELDS, "file"))
    yield from problems
    if not isinstance(data, dict) or not isinstance(data.get("signatures"), list):
        return
    seen: dict[str, int | None] = {}
    for i, sig in enumerate(data["signatures"]):
        where = f"signatures[{i}]" + (f" › {sig.get('id')}" if isinstance(sig, dict) and sig.get("id") else "")
        shape = list(_fields(sig, _FIELDS, where))
        yield from shape
        if shape:
            continue
        ident = sig["id"]
        if not ID_RE.match(ident):
            yield sig.line_of("id"), f"id {ident!r} is not kebab-case", "use lower-case words joined by '-'", where
        if ident in seen:
            yield sig.line_of("id"), f"duplicate signature id {ident!r} (first at line {seen[ident]})", "", where
        seen[ident] = sig.line_of("id")
        yield from _check_pattern(sig, where)
        yield from _check_purpose(sig, known, where)


def _check_purpose(sig: dict, known: set[str] | None, where: str) -> Iterator[tuple[int | None, str, str, str]]:
    purposes = [k for k in ("finding", "fact", "context", "wrapper", "failure") if k in sig and sig[k] is not False]
    if len(purposes) != 1:
        yield (sig.line, f"a signature needs exactly one of finding, fact, context, wrapper, failure; found {purposes or 'none'}",
               "finding: <catalog id> for evidence, fact: log.<name> for information, context: true for refine, "
               "wrapper: true for a message that frames another, failure: true for a failure that names no cause",
               where)
        return
    purpose = purposes[0]
    finding_only = ("priority", "severity", "echo", "generic", "refine", "alone")
    for key in finding_only:
        if key in sig and purpose != "finding":
            yield sig.line_of(key), f"{key!r} only applies to finding signatures", "", where
    if purpose == "finding":
        if "priority" not in sig:
            yield sig.line, "missing required key 'priority'", "root-cause rank: higher wins (see docs/LOGS.md)", where
        elif not 0 <= sig["priority"] <= 100:
            yield sig.line_of("priority"), f"priority {sig['priority']} is outside 0..100", "", where
        if known is not None and sig["finding"] not in known:
            close = difflib.get_close_matches(sig["finding"], known, n=1)
            yield (sig.line_of("finding"), f"unknown finding id {sig['finding']!r}",
                   f"did you mean {close[0]!r}?" if close else "use an id from diagnosis-ids.md", where)
        if sig.get("severity") is not None and sig["severity"] not in SEVERITIES:
            yield sig.line_of("severity"), f"severity {sig['severity']!r} is not one of {SEVERITIES}", "", where
        if sig.get("alone") is False and not sig.get("refine"):
            yield sig.line_of("alone"), "'alone: false' needs a refine (the contexts where the line is evidence)", "", where
        for j, ref in enumerate(sig.get("refine") or []):
            crumb = f"{where} › refine[{j}]"
            shape = list(_fields(ref, _REFINE_FIELDS, crumb))
            yield from shape
            if not shape and known is not None and ref["finding"] not in known:
                yield ref.line_of("finding"), f"unknown finding id {ref['finding']!r}", "", crumb
    if purpose == "fact":
        if not FACT_RE.match(sig["fact"]):
            yield sig.line_of("fact"), f"fact {sig['fact']!r} must look like log.<snake_case_name>", "", where
        elif sig["fact"] in RESERVED_FACTS:
            yield sig.line_of("fact"), f"fact {sig['fact']!r} is computed by the analyzer itself", "", where
        if sig.get("collect", "unique") not in COLLECT_MODES:
            yield sig.line_of("collect"), f"collect {sig['collect']!r} is not one of {COLLECT_MODES}", "", where
    elif "collect" in sig:
        yield sig.line_of("collect"), "'collect' only applies to fact signatures", "", where
    if "tail" in sig and (purpose != "failure" or sig["tail"] < 1):
        yield sig.line_of("tail"), "'tail' applies to failure signatures and is a number of lines (1 or more)", "", where
    if sig.get("teardown") and purpose != "context":
        yield sig.line_of("teardown"), "'teardown' only applies to context signatures", "", where
    if "inner" in sig and (purpose != "wrapper" or sig["inner"] not in INNER_MODES):
        yield (sig.line_of("inner"), f"'inner' applies to wrapper signatures and is one of {INNER_MODES}", "", where)


def check_references(signatures: list[dict], known_findings: Iterable[str]) -> list[tuple[str, int | None, str]]:
    """The library as a whole (``troubleshoot rules check``): every signature carries real example
    lines and each still matches its pattern, every finding id exists, refine targets are signature
    ids, ids are unique.

    Returns ``(source path, line, message)`` triples.
    """
    known = set(known_findings)
    ids: dict[str, str] = {}
    problems = []
    for sig in signatures:
        where = (sig.get("_source", ""), sig.get("_line"))
        examples = sig.get("examples") or []
        if not examples:
            problems.append((*where, f"signature {sig.get('id')!r} has no examples (real log lines it must match)"))
        try:
            regex = re.compile(sig.get("pattern", ""))
        except re.error:
            regex = None  # reported by the file validator
        for example in examples if regex else ():
            if not isinstance(example, str) or not regex.search(example):
                problems.append((*where, f"signature {sig.get('id')!r}: example {example!r} no longer matches"))
        if sig.get("id") in ids:
            problems.append((*where, f"signature id {sig['id']!r} also defined in {ids[sig['id']]}"))
        ids.setdefault(sig.get("id"), where[0])
        for fid in [sig.get("finding")] + [r.get("finding") for r in sig.get("refine") or [] if isinstance(r, dict)]:
            if fid is not None and fid not in known:
                problems.append((*where, f"signature {sig.get('id')!r}: unknown finding id {fid!r}"))
    for sig in signatures:
        for ref in sig.get("refine") or []:
            if isinstance(ref, dict) and ref.get("after") not in ids:
                problems.append((sig.get("_source", ""), sig.get("_line"),
                                 f"signature {sig.get('id')!r}: refine after {ref.get('after')!r} is not a signature id"))
    return problems


def compile_signatures(raw: Iterable[dict]) -> list[Signature]:
    """Turn validated signature dicts (``RuleSet.signatures``) into :class:`Signature` objects, in file order."""
    out = []
    for sig in raw:
        refine = tuple(Refinement(r["finding"], r["after"], int(r.get("within", 40)), int(r.get("ranks", 1)),
                                  r.get("priority"), r.get("severity"), r.get("echo"))
                       for r in sig.get("refine") or [])
        out.append(Signature(
            id=sig["id"], regex=re.compile(sig["pattern"]), note=sig["note"], finding=sig.get("finding"),
            fact=sig.get("fact"), context=bool(sig.get("context")), teardown=bool(sig.get("teardown")),
            wrapper=bool(sig.get("wrapper")), failure=bool(sig.get("failure")), tail=int(sig.get("tail", 0)),
            inner=sig.get("inner", "after"), collect=sig.get("collect", "unique"),
            priority=int(sig.get("priority", 0)), severity=sig.get("severity"), echo=bool(sig.get("echo")),
            generic=bool(sig.get("generic")), refine=refine, alone=sig.get("alone", True) is not False, captures=dict(sig.get("captures") or {}),
            source=sig.get("_source", ""), line=sig.get("_line"),
            anchors=tuple(required_literals(sig["pattern"]) or ()),
            bregex=re.compile(sig["pattern"].encode("utf-8")) if sig.get("fact") else None,
            context_free=context_free(sig["pattern"]),
        ))
    return out
