"""The wordings of the symptom scan and the cross-rank facts (``rules/symptoms.yaml``), validated and compiled.

The YAML file holds the words (launcher labels, loss and progress wordings, progress-bar redraws,
what is masked between ranks, progress positions, rates, failure markers, the rank-list wording of
a stuck-rank hit, line prefixes, what starts a line of its own in a paste and how a pasted row shows it is
whole or was cut, how launchers report a rank's exit and which exceptions end nothing); this module assembles
them into the line regexes the readers run (:class:`SymptomWords`). An overlay's file (``--rules DIR``) replaces
the keys it gives.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterable

from troubleshooter.core.errors import RuleFileError, RuleIssue

WORDS_FILE = "symptoms.yaml"
# key -> (what it holds, for messages); lists are regex alternatives unless said otherwise
_LISTS = {
    "line_labels": "a launcher's rank label at a line start", "progress_bar": "a progress-bar redraw",
    "loss": "a loss value on a line", "bare_value": "a line that is only a value",
    "progress_words": "literal words of a progress line", "mask": "what differs between ranks printing the same line",
    "position_openers": "what stands before a step/total position", "rate": "a rate with its unit",
    "went_on": "a failure marker after the last start-up line",
    "line_prefixes": "a launcher's, collector's or logger's prefix at a line start",
    "progress_elapsed": "how long a progress bar has run ([H:]MM:SS)",
    "timeout_value": "the timeout a collective or store wait ran out of",
    "own_line_starts": "what starts a line of its own in a pasted log (never joined to the row before)",
    "own_line_after_word": "what starts a line of its own after a row a re-flow broke",
    "failure_starts": "what begins a line of a failure (a traceback, a frame, an exception, a kill)",
    "failure_words": "what tells a failure in a line of prose (a paste re-flowed narrower than 80 joins such lines)",
    "line_ends": "how a pasted row that is a whole line ends (literal endings)",
    "clause_ends": "how a pasted row may end a line, unless the paste is known re-flowed (literal endings)",
    "goes_on": "how a row that reads as the rest of a row a re-flow broke begins (literal beginnings)",
    "banner_end": "a banner's run that ends a whole row, however long",
    "whole_frame": "a traceback frame's row as Python prints it whole",
    "terminal_widths": "terminal widths where a few rows cut at one width show a hard wrap (whole numbers)",
    "swallowed_exception": "a report of an exception Python swallowed (its traceback ended nothing)",
    "launcher_exceptions": "how the type of an exception the launcher itself raised ends (literal endings)",
    "json_log_fields": "the key of a log collector's JSON line that holds the program's line (literal keys)",
}
_LITERALS = ("progress_words", "line_ends", "clause_ends", "goes_on", "launcher_exceptions",
             "json_log_fields")  # literal strings
_NUMBERS = ("terminal_widths",)  # lists of whole numbers
PREFIX_GROUPS = ("rank", "task", "host", "iso", "glog")  # what a line prefix may tell (named groups)
_STUCK = {"finding": str, "naming_vars": list, "rank_list": str}
_RATE_GROUPS = ("value", "unit", "per", "key", "keyed")
_GROUPS = {"progress_elapsed": ("elapsed",), "timeout_value": ("ms", "s")}  # the one named group each alternative gives
_MAPPINGS = ("stuck_ranks", "rank_exits", "signal_words", "typography")  # keys holding a mapping or a list of mappings
_RANK_EXIT = {"launcher": str, "anchors": list, "pattern": str, "examples": list}  # required; "code" optional
EXIT_GROUPS = ("code", "signum", "signame", "rank", "local", "host", "pid")  # what a rank_exits pattern may capture


@dataclass(frozen=True)
class RankExit:
    """One launcher's one-line report of a rank's exit (``rank_exits`` of symptoms.yaml)."""

    launcher: str
    regex: re.Pattern[str]  # searched in a line; groups of EXIT_GROUPS
    code: int | None        # the exit code when the regex captures none


@dataclass(frozen=True)
class SymptomWords:
    """The compiled wordings (byte regexes over a log's windows; ``rank_list`` over a hit's value)."""

    bar: re.Pattern[bytes]
    has_loss: re.Pattern[bytes]
    loss_line: re.Pattern[bytes]       # group ``body``: an unlabelled line with a loss value, or a bare value
    progress_line: re.Pattern[bytes]   # group ``body``: a (possibly labelled) line with a progress word and a number
    mask: re.Pattern[bytes]
    position: re.Pattern[bytes]        # groups ``step``, ``total``
    rate: re.Pattern[bytes]            # groups ``value``, ``unit``, ``per`` | ``key``, ``keyed``
    went_on: re.Pattern[bytes]
    timeout_finding: str
    naming_vars: tuple[str, ...]
    rank_list: re.Pattern[str]
    prefix: re.Pattern[str]            # one line prefix at the start (str lines); its groups read by prefix_kinds
    prefix_kinds: dict[str, str]       # group name -> what it tells (PREFIX_GROUPS)
    elapsed: tuple[re.Pattern[bytes], ...]        # group ``elapsed``: a progress bar's running time, [H:]MM:SS
    timeout_value: tuple[re.Pattern[bytes], ...]  # group ``ms`` or ``s``: the timeout a wait ran out of
    own_line: re.Pattern[str]          # matched at a row's start (indentation removed): a line of its own
    own_line_after_word: re.Pattern[str]  # matched at a row's start: a line of its own after a re-flow's break
    failure_start: re.Pattern[str]        # searched in a row: where a line of a failure begins
    failure_words: re.Pattern[str]        # searched in a row: a word that tells a failure
    line_ends: tuple[str, ...]            # a pasted row ending so is a whole line
    line_or_clause_ends: tuple[str, ...]  # the same, with the clause ends (a paste not known re-flowed)
    goes_on: tuple[str, ...]              # a row beginning so reads as the rest of the row before
    banner_end: re.Pattern[str]           # searched in a row: a banner's run ends it
    whole_frame: re.Pattern[str]          # matched at a row's start (indentation removed): a whole frame row
    terminal_widths: frozenset[int]
    rank_exits: tuple[RankExit, ...]
    exit_anchors: tuple[str, ...]         # a line holding none of these is no rank exit
    signal_words: dict[str, int]          # a launcher's word for a signal -> its number
    swallowed: re.Pattern[str]            # matched at a line's start: an exception Python swallowed is reported
    launcher_exceptions: tuple[str, ...]  # the type of an exception the launcher raised ends so
    typography: re.Pattern[bytes]         # a character a forum's typographer wrote (UTF-8)
    typography_ascii: dict[bytes, bytes]  # that character -> the ASCII it stands for
    json_log_fields: tuple[str, ...]      # the keys of a collector's JSON line holding the program's line


def _alternatives(items: list[str]) -> bytes:
    """One regex for a list of alternatives (a single one stays as it is)."""
    parts = [item.encode("utf-8") for item in items]
    return parts[0] if len(parts) == 1 else b"(?:" + b"|".join(parts) + b")"


def compile_prefixes(items: list[str]) -> tuple[re.Pattern[str], dict[str, str]]:
    """One regex for the line-prefix alternatives: each alternative's groups renamed apart (``rank`` of the
    third becomes ``rank_2``), with the map back to what each tells."""
    kinds: dict[str, str] = {}
    parts = []
    for index, item in enumerate(items):
        def rename(match: re.Match, index: int = index) -> str:
            kinds[f"{match.group(1)}_{index}"] = match.group(1)
            return f"(?P<{match.group(1)}_{index}>"
        parts.append(re.sub(r"\(\?P<(\w+)>", rename, item))
    return re.compile(r"\s*(?:" + "|".join(parts) + ")"), kinds


def compile_words(raw: dict[str, Any]) -> SymptomWords:
    """Assemble the line regexes from validated wordings (every key present)."""
    label = b"(?:" + b"|".join(item.encode("utf-8") for item in raw["line_labels"]) + b")"
    loss = _alternatives(raw["loss"])
    bar = re.compile(b"|".join(item.encode("utf-8") for item in raw["progress_bar"]))
    loss_line = re.compile(rb"^(?![ \t]*" + label + rb")[ \t]*(?P<body>[^\n]*?" + loss + rb"[^\n]*|"
                           + _alternatives(raw["bare_value"]) + rb")$", re.M)
    words = b"|".join(re.escape(word).encode("utf-8") for word in raw["progress_words"])
    progress_line = re.compile(rb"^[ \t]*(?:" + label + rb"[ \t]*){0,3}"
                               rb"(?P<body>[^\n]*?\b(?i:" + words + rb")\b[^\n]{0,3}?\d[^\n]*)$", re.M)
    position = re.compile(b"(?:" + b"|".join(item.encode("utf-8") for item in raw["position_openers"]) +
                          rb")(?P<step>\d+)[ \t]*/[ \t]*(?P<total>\d+)\b(?![./])")
    went_on = re.compile(re.sub(rb"\(\?P<\w+>", b"(", rb"|".join((progress_line.pattern, loss_line.pattern, bar.pattern)))
                         + b"|" + b"|".join(item.encode("utf-8") for item in raw["went_on"]), re.M)
    stuck = raw["stuck_ranks"]
    prefix, prefix_kinds = compile_prefixes(raw["line_prefixes"])
    return SymptomWords(
        bar=bar, has_loss=re.compile(loss), loss_line=loss_line, progress_line=progress_line,
        mask=re.compile(b"|".join(item.encode("utf-8") for item in raw["mask"])), position=position,
        rate=re.compile(b"|".join(item.encode("utf-8") for item in raw["rate"])), went_on=went_on,
        timeout_finding=stuck["finding"], naming_vars=tuple(stuck["naming_vars"]), rank_list=re.compile(stuck["rank_list"]),
        prefix=prefix, prefix_kinds=prefix_kinds,
        elapsed=tuple(re.compile(item.encode("utf-8")) for item in raw["progress_elapsed"]),
        timeout_value=tuple(re.compile(item.encode("utf-8")) for item in raw["timeout_value"]),
        own_line=re.compile("(?:" + "|".join(raw["own_line_starts"]) + ")"),
        own_line_after_word=re.compile("(?:" + "|".join(raw["own_line_after_word"]) + ")"),
        failure_start=re.compile("|".join(raw["failure_starts"])),
        failure_words=re.compile("|".join(raw["failure_words"])),
        line_ends=tuple(raw["line_ends"]), line_or_clause_ends=tuple(raw["line_ends"] + raw["clause_ends"]),
        goes_on=tuple(raw["goes_on"]), banner_end=re.compile("|".join(raw["banner_end"])),
        whole_frame=re.compile("|".join(raw["whole_frame"])), terminal_widths=frozenset(raw["terminal_widths"]),
        rank_exits=tuple(RankExit(item["launcher"], re.compile(item["pattern"]), item.get("code"))
                         for item in raw["rank_exits"]),
        exit_anchors=tuple(dict.fromkeys(anchor for item in raw["rank_exits"] for anchor in item["anchors"])),
        signal_words=dict(raw["signal_words"]), swallowed=re.compile("(?:" + "|".join(raw["swallowed_exception"]) + ")"),
        launcher_exceptions=tuple(raw["launcher_exceptions"]),
        typography=re.compile(b"|".join(re.escape(char.encode("utf-8")) for char in raw["typography"])),
        typography_ascii={char.encode("utf-8"): ascii.encode("utf-8") for char, ascii in raw["typography"].items()},
        json_log_fields=tuple(raw["json_log_fields"]))


def _regex_problem(pattern: str, verify: bool) -> str | None:
    try:
        re.compile(pattern.encode("utf-8"))
    except re.error as exc:
        return f"does not compile: {exc}"
    if verify:
        from troubleshooter.core.saferegex import regex_problem

        return regex_problem(pattern)
    return None


def parse_words(path: Path, issues: list[RuleIssue], verify: bool = True) -> dict[str, Any]:
    """One symptoms.yaml: the keys it gives (each checked); problems go to ``issues`` with file:line."""
    from troubleshooter.core.yamlspan import YamlError, load_file

    def problem(line: int | None, message: str, help: str = "", crumb: str = "") -> None:
        issues.append(RuleIssue(str(path), line, message, help, crumb))

    try:
        data = load_file(path)
    except YamlError as exc:
        problem(exc.line, exc.message)
        return {}
    if not isinstance(data, dict):
        problem(getattr(data, "line", 1), "expected a mapping of wording lists",
                f"keys: doc, {', '.join((*_LISTS, *_MAPPINGS))}")
        return {}
    out: dict[str, Any] = {}
    for key, value in data.items():
        line = data.line_of(key)
        if key == "doc":
            continue
        if key in _MAPPINGS:
            out[key] = {"stuck_ranks": _stuck_ranks, "rank_exits": _rank_exits,
                        "signal_words": _signal_words, "typography": _typography}[key](value, line, problem, verify)
            continue
        if key not in _LISTS:
            close = difflib.get_close_matches(str(key), [*_LISTS, *_MAPPINGS, "doc"], n=1)
            problem(line, f"unknown key {key!r}", f"did you mean {close[0]!r}?" if close else
                    f"allowed keys: doc, {', '.join((*_LISTS, *_MAPPINGS))}")
            continue
        if key in _NUMBERS:
            if not isinstance(value, list) or not value or not all(type(item) is int and item > 0 for item in value):
                problem(line, f"{key!r} should be a non-empty list of whole numbers ({_LISTS[key]})", "", key)
            else:
                out[key] = list(value)
            continue
        if not isinstance(value, list) or not value or not all(isinstance(item, str) and item for item in value):
            problem(line, f"{key!r} should be a non-empty list of strings ({_LISTS[key]})", "", key)
            continue
        bad = False
        for i, item in enumerate(value if key not in _LITERALS else ()):
            message = _regex_problem(item, verify)
            if message:
                problem(value.line_of(i), f"{key}[{i}] {message}", "each entry is a Python regular expression", key)
                bad = True
        if not bad:
            out[key] = list(value)
    for i, item in enumerate(out.get("line_prefixes") or ()):
        unknown = set(re.compile(item).groupindex) - set(PREFIX_GROUPS)
        if unknown:
            problem(data["line_prefixes"].line_of(i), f"line_prefixes[{i}] names unknown group(s) "
                    f"{', '.join(sorted(unknown))}", f"groups tell one of: {', '.join(PREFIX_GROUPS)}", "line_prefixes")
            del out["line_prefixes"]
            break
    for key, names in _GROUPS.items():
        for i, item in enumerate(out.get(key) or ()):
            groups = set(re.compile(item.encode("utf-8")).groupindex)
            if len(groups) != 1 or not groups <= set(names):
                problem(data[key].line_of(i), f"{key}[{i}] must name exactly one group, {' or '.join(names)} "
                        f"(found {', '.join(sorted(groups)) or 'none'})", "", key)
                del out[key]
                break
    if "rate" in out:
        groups = set().union(*(re.compile(item.encode("utf-8")).groupindex for item in out["rate"]))
        if groups != set(_RATE_GROUPS):
            problem(data.line_of("rate"), f"'rate' alternatives must name the groups {', '.join(_RATE_GROUPS)} "
                    f"between them (found {', '.join(sorted(groups)) or 'none'})", "", "rate")
            del out["rate"]
    return out


def _stuck_ranks(value: Any, line: int | None, problem: Any, verify: bool) -> dict[str, Any] | None:
    if not isinstance(value, dict) or set(value) != set(_STUCK) or \
            not all(isinstance(value[k], kind) for k, kind in _STUCK.items()):
        problem(line, "'stuck_ranks' should be a mapping of finding (an id), naming_vars (a list of "
                "variable names) and rank_list (a regex with one group)", "", "stuck_ranks")
        return None
    message = _regex_problem(value["rank_list"], verify)
    if message is None and re.compile(value["rank_list"]).groups != 1:
        message = "must have exactly one group (the rank list)"
    if message:
        problem(value.line_of("rank_list"), f"stuck_ranks.rank_list {message}", "", "stuck_ranks")
        return None
    return value


def _rank_exits(value: Any, line: int | None, problem: Any, verify: bool) -> list[dict[str, Any]] | None:
    if not isinstance(value, list) or not value or not all(isinstance(item, dict) for item in value):
        problem(line, "'rank_exits' should be a non-empty list of mappings (launcher, anchors, pattern, examples, "
                "optional code)", "", "rank_exits")
        return None
    for i, item in enumerate(value):
        where = f"rank_exits[{i}]"
        wrong = [k for k in item if k not in (*_RANK_EXIT, "code")]
        if wrong or not all(isinstance(item.get(k), kind) and item[k] for k, kind in _RANK_EXIT.items()) \
                or not all(isinstance(a, str) and a for a in item["anchors"]) \
                or not all(isinstance(e, str) and e for e in item["examples"]) \
                or type(item.get("code", 0)) is not int:
            problem(value.line_of(i), f"{where} should give launcher (a name), anchors and examples (non-empty lists "
                    f"of strings), pattern (a regex) and optionally code (a whole number)"
                    + (f"; unknown key(s) {', '.join(map(str, wrong))}" if wrong else ""), "", "rank_exits")
            return None
        message = _regex_problem(item["pattern"], verify)
        unknown = set() if message else set(re.compile(item["pattern"]).groupindex) - set(EXIT_GROUPS)
        if message or unknown:
            problem(item.line_of("pattern"), f"{where}.pattern " + (message or f"names unknown group(s) "
                    f"{', '.join(sorted(unknown))}"), f"groups: {', '.join(EXIT_GROUPS)}", "rank_exits")
            return None
        regex = re.compile(item["pattern"])
        for j, example in enumerate(item["examples"]):
            if not any(anchor in example for anchor in item["anchors"]) or not regex.search(example):
                problem(item["examples"].line_of(j), f"{where}.examples[{j}] " + (
                    "holds none of the anchors" if regex.search(example) else "is not matched by the pattern"),
                    "an example is a real line the pattern reads", "rank_exits")
                return None
    return value


def _signal_words(value: Any, line: int | None, problem: Any, verify: bool) -> dict[str, int] | None:
    if not isinstance(value, dict) or not value or \
            not all(isinstance(k, str) and k and type(v) is int and v > 0 for k, v in value.items()):
        problem(line, "'signal_words' should map a launcher's word for a signal to the signal's number", "",
                "signal_words")
        return None
    return value


def _typography(value: Any, line: int | None, problem: Any, verify: bool) -> dict[str, str] | None:
    if not isinstance(value, dict) or not value or not all(
            isinstance(k, str) and len(k) == 1 and not k.isascii() and isinstance(v, str) and v and v.isascii()
            for k, v in value.items()):
        problem(line, "'typography' should map one non-ASCII character a typographer writes to the ASCII text "
                "it stands for", "", "typography")
        return None
    return value


def read_words(dirs: Iterable[Path], issues: list[RuleIssue], verify: bool = True) -> dict[str, Any]:
    """The wordings of each directory's symptoms.yaml, later directories' keys over earlier ones."""
    raw: dict[str, Any] = {}
    first, before = None, len(issues)
    for directory in dirs:
        path = Path(directory) / WORDS_FILE
        if path.exists():
            first = first or path
            raw.update({k: v for k, v in parse_words(path, issues, verify).items() if v is not None})
    missing = [key for key in (*_LISTS, *_MAPPINGS) if key not in raw]
    if first is not None and missing and len(issues) == before:
        issues.append(RuleIssue(str(first), None, f"missing wording key(s): {', '.join(missing)}",
                                "the shipped rules/symptoms.yaml gives every key"))
    return raw


@lru_cache(maxsize=1)
def shipped_words() -> SymptomWords:
    """The compiled wordings of the shipped ``rules/symptoms.yaml`` (RuleFileError on any problem)."""
    from troubleshooter.core.paths import rules_dir

    issues: list[RuleIssue] = []
    raw = read_words([rules_dir()], issues, verify=False)
    if issues:
        raise RuleFileError(issues)
    return compile_words(raw)


def words_of(rules: Any) -> SymptomWords:
    """The wordings of a loaded RuleSet (its overlays included), else the shipped ones."""
    raw = getattr(rules, "symptom_words", None)
    if not raw:
        return shipped_words()
    cached = rules.derived.get("symptom_words")
    if cached is None:
        cached = rules.derived["symptom_words"] = compile_words(raw)
    return cached
