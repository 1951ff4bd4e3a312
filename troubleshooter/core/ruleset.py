"""Load and validate the YAML knowledge base in ``rules/`` (plus ``--rules DIR`` overlays).

Layout of a rules directory (every part optional in an overlay)::

    findings/<id>.yaml        the catalog: what a finding means and how to fix it
    checks/<id>.yaml          detection: a condition over facts that raises a finding
    trees/<id>.yaml           one decision tree per symptom
    checklists/<id>.yaml      red-flag checklist, multi-node procedure, ...
    pitfalls.yaml             the pitfall table
    rationalizations.yaml     excuse -> reality -> correct approach
    expectations.yaml         what a link should give (bandwidth table)
    signatures/<group>.yaml   log signatures (validated by troubleshooter.logs)
    checks/<id>.cases.yaml    fixture cases of a check (facts in, fires or quiet)
    scan/*.yaml, live/*.yaml  scanner name patterns, live frame patterns
    launchers.yaml            the launcher table (troubleshooter.core.launchers)
    symptoms.yaml             wordings of the log symptom scan (troubleshooter.logs.symptomwords)

A YAML file anywhere else is an error, never silently skipped. Every problem is collected
(file, line, breadcrumb, help) and raised together as a :class:`RuleFileError`.

Overlays (``--rules DIR``) and an explicit ``base`` are untrusted: besides the YAML budgets of
:mod:`yamlspan`, their templates get a trial render under the budget of :mod:`ruletext` and
their regular expressions the backtracking check of :mod:`saferegex`. The shipped base gets
those checks from ``rules check`` (``verify=True``) and the test suite.
"""

from __future__ import annotations

import difflib
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

from troubleshooter.core import conditions
from troubleshooter.core.errors import IssueCollector, RuleFileError
from troubleshooter.core.paths import rules_dir
from troubleshooter.core.ruletext import template_problem
from troubleshooter.core.saferegex import regex_problem
from troubleshooter.core.yamlspan import SpanDict, load_yaml_file

SEVERITIES = ("error", "warning", "info")
CATEGORIES = ("launch", "environment", "network", "device", "code", "communication", "hang", "performance")
ID_RE = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
NODE_VERBS = ("ask", "probe", "branch", "conclude")

# Field schemas: name -> (python types, required)
_STR, _LIST, _DICT = (str,), (list,), (dict,)
FINDING_FIELDS = {
    "id": (_STR, True), "code": (_STR, False), "title": (_STR, True), "severity": (_STR, True),
    "category": (_STR, True), "why": (_STR, True), "fix": (_STR, True), "commands": (_LIST, False),
    "references": (_LIST, True), "explains": (_LIST, False), "gate": (_DICT, False),
    "priority": (_STR, False),
}
CHECK_FIELDS = {
    "id": (_STR, True), "finding": (_STR, True), "when": (_DICT, True), "scope": (_STR, False),
    "evidence": (_LIST, False), "detail": (_STR, False), "severity": (_STR, False), "doc": (_STR, False),
    "vars": (_DICT, False), "ranks": (_STR, False),
}
TREE_FIELDS = {
    "id": (_STR, True), "title": (_STR, True), "symptom": (_STR, True), "start": (_STR, True),
    "nodes": (_DICT, True), "order": ((int,), False),
}
NODE_FIELDS = {
    "ask": (_STR, False), "probe": ((str, list), False), "branch": (_STR, False), "conclude": ((str, list), False),
    "why": (_STR, False), "answers": (_DICT, False), "then": (_LIST, False), "else": (_STR, False),
    "counters": (_LIST, False), "requires": (_DICT, False), "summary": (_STR, False), "next_steps": (_LIST, False),
}


@dataclass
class RuleSet:
    """The validated knowledge base."""

    findings: dict[str, dict] = field(default_factory=dict)
    checks: dict[str, dict] = field(default_factory=dict)
    trees: dict[str, dict] = field(default_factory=dict)
    checklists: dict[str, dict] = field(default_factory=dict)
    pitfalls: list[dict] = field(default_factory=list)
    rationalizations: dict[str, dict] = field(default_factory=dict)
    expectations: dict[str, Any] = field(default_factory=dict)
    signatures: list[dict] = field(default_factory=list)
    cases: dict[str, dict] = field(default_factory=dict)  # check id -> {fires: [...], quiet: [...]}
    scan_patterns: dict[str, Any] = field(default_factory=dict)  # scan/*.yaml lists (troubleshooter.scan.patterns)
    launchers: Any = None  # launchers.yaml (troubleshooter.core.launchers.LauncherTable)
    live: Any = None  # live/*.yaml (troubleshooter.live.rules.LiveRules)
    symptom_words: dict[str, Any] = field(default_factory=dict)  # symptoms.yaml (troubleshooter.logs.symptomwords)
    derived: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)  # consumers' compiled forms
    sources: dict[str, str] = field(default_factory=dict)  # "kind:id" -> file path
    dirs: list[Path] = field(default_factory=list)


def _check_fields(c: IssueCollector, path: Path, data: Any, schema: dict, where: str) -> bool:
    if not isinstance(data, dict):
        c.add(path, getattr(data, "line", 1), f"expected a mapping at {where}, got {type(data).__name__}")
        return False
    ok = True
    for key, (types, required) in schema.items():
        if key not in data:
            if required:
                c.add(path, data.line if isinstance(data, SpanDict) else None, f"missing required key {key!r}",
                      f"add `{key}:`", where)
                ok = False
        elif not isinstance(data[key], types):
            want = " or ".join({str: "a string", list: "a list", dict: "a mapping", int: "an integer"}[t] for t in types)
            c.add(path, data.line_of(key), f"key {key!r} should be {want}, got {type(data[key]).__name__}", "", where)
            ok = False
    for key in data:
        if key not in schema:
            close = difflib.get_close_matches(key, list(schema), n=1)
            c.add(path, data.line_of(key), f"unknown key {key!r}",
                  f"did you mean {close[0]!r}?" if close else f"allowed keys: {', '.join(schema)}", where)
            ok = False
    return ok


def _check_condition(c: IssueCollector, path: Path, cond: Any, where: str) -> None:
    for message, line, crumb, help in conditions.validate(cond, where):
        c.add(path, line, message, help, crumb)


def _id_ok(c: IssueCollector, path: Path, data: dict, stem_must_match: bool = True) -> bool:
    ident = data.get("id")
    if not isinstance(ident, str):
        return False
    if not ID_RE.match(ident):
        c.add(path, data.line_of("id"), f"id {ident!r} is not kebab-case", "use lower-case words joined by '-'")
        return False
    if stem_must_match and ident != path.stem:
        c.add(path, data.line_of("id"), f"id {ident!r} does not match the file name {path.name!r}",
              f"rename the file to {ident}.yaml or the id to {path.stem}")
        return False
    return True


def _check_template(c: IssueCollector, path: Path, holder: Any, key: Any, crumb: str) -> None:
    """A rule text field that does not compile or exceeds the rendering budget with no facts."""
    text = holder[key]
    if not isinstance(text, str):
        return
    problem = template_problem(text)
    if problem:
        line = holder.line_of(key) if hasattr(holder, "line_of") else None
        c.add(path, line, problem[1], "rule text is a sandboxed Jinja template: variables, filters, if, "
              "for over facts", crumb)


def _load_findings(c: IssueCollector, rs: RuleSet, directory: Path, verify: bool) -> None:
    for path in sorted((directory / "findings").glob("*.yaml")):
        data = load_yaml_file(c, path)
        if data is None or not _check_fields(c, path, data, FINDING_FIELDS, "finding") or not _id_ok(c, path, data):
            continue
        if data["severity"] not in SEVERITIES:
            c.add(path, data.line_of("severity"), f"severity {data['severity']!r} is not one of {SEVERITIES}")
        if data["category"] not in CATEGORIES:
            c.add(path, data.line_of("category"), f"category {data['category']!r} is unknown",
                  f"expected one of: {', '.join(CATEGORIES)}")
        if not data["references"]:
            c.add(path, data.line_of("references"), "references must not be empty", "cite the docs or an issue")
        if "gate" in data:
            gate = data["gate"]
            if _check_fields(c, path, gate, {"when": (_DICT, True), "unmet": (_STR, True), "probe": (_STR, False)}, "gate"):
                _check_condition(c, path, gate["when"], "gate › when")
                if verify:
                    _check_template(c, path, gate, "unmet", "gate › unmet")
        if verify:
            for key in ("title", "why", "fix"):
                _check_template(c, path, data, key, key)
            for i, command in enumerate(data.get("commands") or []):
                _check_template(c, path, data["commands"], i, f"commands[{i}]")
        rs.findings[data["id"]] = data
        rs.sources[f"finding:{data['id']}"] = str(path)


CASES_SUFFIX = ".cases.yaml"


def _load_cases(c: IssueCollector, rs: RuleSet, path: Path) -> None:
    """``checks/<id>.cases.yaml``: {fires: [facts, ...], quiet: [facts, ...]} (run by ``rules check``)."""
    data = load_yaml_file(c, path)
    if data is None or not _check_fields(c, path, data, {"fires": (_LIST, False), "quiet": (_LIST, False)}, "cases"):
        return
    for kind in ("fires", "quiet"):
        for i, facts in enumerate(data.get(kind) or []):
            if not isinstance(facts, dict):
                c.add(path, data[kind].line_of(i), f"{kind}[{i}] must be a mapping of facts", "", kind)
    check_id = path.name[: -len(CASES_SUFFIX)]
    rs.cases[check_id] = data
    rs.sources[f"cases:{check_id}"] = str(path)


def _load_checks(c: IssueCollector, rs: RuleSet, directory: Path, verify: bool) -> None:
    for path in sorted((directory / "checks").glob("*.yaml")):
        if path.name.endswith(CASES_SUFFIX):
            if verify:  # fixtures matter to `rules check` and the tests, not to a diagnosis
                _load_cases(c, rs, path)
            continue
        data = load_yaml_file(c, path)
        if data is None or not _check_fields(c, path, data, CHECK_FIELDS, "check") or not _id_ok(c, path, data):
            continue
        _check_condition(c, path, data["when"], "when")
        if data.get("scope", "any") not in ("any", "world", "rank"):
            c.add(path, data.line_of("scope"), f"scope {data['scope']!r} is unknown", "expected any, world or rank")
        if data.get("severity") is not None and data["severity"] not in SEVERITIES:
            c.add(path, data.line_of("severity"), f"severity {data['severity']!r} is not one of {SEVERITIES}")
        if verify:
            if "detail" in data:
                _check_template(c, path, data, "detail", "detail")
            for name in data.get("vars") or {}:
                _check_template(c, path, data["vars"], name, f"vars › {name}")
        rs.checks[data["id"]] = data
        rs.sources[f"check:{data['id']}"] = str(path)


def _load_trees(c: IssueCollector, rs: RuleSet, directory: Path) -> None:
    for path in sorted((directory / "trees").glob("*.yaml")):
        data = load_yaml_file(c, path)
        if data is None or not _check_fields(c, path, data, TREE_FIELDS, "tree") or not _id_ok(c, path, data):
            continue
        nodes = data["nodes"]
        for node_id, node in nodes.items():
            crumb = f"nodes › {node_id}"
            if not ID_RE.match(node_id):
                c.add(path, nodes.line_of(node_id), f"node id {node_id!r} is not kebab-case", "", "nodes")
            if not _check_fields(c, path, node, NODE_FIELDS, crumb):
                continue
            verbs = [v for v in NODE_VERBS if v in node]
            if len(verbs) != 1:
                c.add(path, node.line, f"node {node_id!r} needs exactly one of {', '.join(NODE_VERBS)}, found {verbs or 'none'}",
                      "a node asks, runs a probe, branches on facts, or concludes", crumb)
                continue
            verb = verbs[0]
            if verb == "ask" and not node.get("answers"):
                c.add(path, node.line, f"ask node {node_id!r} has no answers", "add answers: {\"yes\": node, \"no\": node}", crumb)
            if verb in ("probe", "branch") and "else" not in node:
                c.add(path, node.line, f"{verb} node {node_id!r} has no 'else' target",
                      "every branching node needs a fallback", crumb)
            for i, branch in enumerate(node.get("then") or []):
                where = f"{crumb} › then[{i}]"
                if _check_fields(c, path, branch, {"when": (_DICT, True), "goto": (_STR, True)}, where):
                    _check_condition(c, path, branch["when"], f"{where} › when")
            if "requires" in node and _check_fields(
                    c, path, node["requires"], {"when": (_DICT, True), "probe": (_STR, False), "reason": (_STR, True)},
                    f"{crumb} › requires"):
                _check_condition(c, path, node["requires"]["when"], f"{crumb} › requires › when")
        if data["start"] not in nodes:
            c.add(path, data.line_of("start"), f"start node {data['start']!r} is not defined",
                  f"define it under nodes, or start at one of: {', '.join(list(nodes)[:5])}")
        rs.trees[data["id"]] = data
        rs.sources[f"tree:{data['id']}"] = str(path)


CHECKLIST_ITEM_FIELDS = {
    "id": (_STR, True), "wrong": (_STR, False), "right": (_STR, False), "step": (_STR, False),
    "minutes": ((int, float), False), "commands": (_LIST, False), "probe": (_STR, False),
    "flagged_when": (_DICT, False), "cleared_when": (_DICT, False), "finding": (_STR, False), "why": (_STR, False),
}


def _load_checklists(c: IssueCollector, rs: RuleSet, directory: Path) -> None:
    for path in sorted((directory / "checklists").glob("*.yaml")):
        data = load_yaml_file(c, path)
        schema = {"id": (_STR, True), "title": (_STR, True), "kind": (_STR, True), "doc": (_STR, False),
                  "groups": (_LIST, True)}
        if data is None or not _check_fields(c, path, data, schema, "checklist") or not _id_ok(c, path, data):
            continue
        if data["kind"] not in ("red-flags", "procedure"):
            c.add(path, data.line_of("kind"), f"kind {data['kind']!r} is unknown", "expected red-flags or procedure")
        for g, group in enumerate(data["groups"]):
            crumb = f"groups[{g}]"
            if not _check_fields(c, path, group, {"id": (_STR, True), "title": (_STR, True), "items": (_LIST, True)}, crumb):
                continue
            for i, item in enumerate(group["items"]):
                where = f"{crumb} › items[{i}]"
                if not _check_fields(c, path, item, CHECKLIST_ITEM_FIELDS, where):
                    continue
                for key in ("flagged_when", "cleared_when"):
                    if key in item:
                        _check_condition(c, path, item[key], f"{where} › {key}")
        rs.checklists[data["id"]] = data
        rs.sources[f"checklist:{data['id']}"] = str(path)


PITFALL_FIELDS = {
    "id": (_STR, True), "number": ((int,), True), "name": (_STR, True), "symptom": (_STR, True),
    "cause": (_STR, True), "fix": (_STR, True), "priority": (_STR, True), "detected_by": (_LIST, True),
    "references": (_LIST, False),
}
RATIONALIZATION_FIELDS = {
    "id": (_STR, True), "excuse": (_STR, True), "reality": (_STR, True), "approach": (_STR, True),
    "verify_probe": (_STR, False), "applies_to": (_LIST, False),
}


def _load_table(c: IssueCollector, path: Path, key: str, schema: dict) -> list[dict]:
    if not path.exists():
        return []
    data = load_yaml_file(c, path)
    if data is None:
        return []
    if not isinstance(data, dict) or not isinstance(data.get(key), list):
        c.add(path, getattr(data, "line", 1), f"expected a top-level key {key!r} holding a list")
        return []
    rows = []
    for i, row in enumerate(data[key]):
        if _check_fields(c, path, row, schema, f"{key}[{i}]"):
            rows.append(row)
    return rows


def _load_signatures(c: IssueCollector, rs: RuleSet, directory: Path, verify: bool) -> None:
    paths = sorted((directory / "signatures").glob("*.yaml"))
    if not paths:
        return
    from troubleshooter.logs.signatures import validate_signature_file

    for path in paths:
        data = load_yaml_file(c, path)
        if data is None:
            continue
        for line, message, help, crumb in validate_signature_file(data):
            c.add(path, line, message, help, crumb)
        for sig in (data.get("signatures") or []) if isinstance(data, dict) else []:
            if verify and isinstance(sig, dict) and isinstance(sig.get("pattern"), str):
                problem = regex_problem(sig["pattern"])
                if problem:
                    c.add(path, sig.line_of("pattern"), problem, "", f"signatures › {sig.get('id')}")
                    continue
            if isinstance(sig, dict):
                rs.signatures.append(dict(sig, _source=str(path), _line=getattr(sig, "line", None)))


TOP_FILES = ("pitfalls.yaml", "rationalizations.yaml", "expectations.yaml", "launchers.yaml", "symptoms.yaml")
FOLDERS = ("findings", "checks", "trees", "checklists", "signatures", "scan", "live")
LIVE_FILES = ("frames.yaml", "pictures.yaml")  # launchers: the top-level launcher table


MAX_LAYOUT_ENTRIES = 20_000  # a rules directory holds hundreds of files; `--rules ~` or `--rules /` is a mistake


def _yaml_files(c: IssueCollector, directory: Path) -> list[Path]:
    """Every .yaml/.yml file under ``directory`` (hidden folders skipped, symlinked folders not followed)."""
    found, seen = [], 0
    for root, dirs, files in os.walk(directory):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        seen += len(dirs) + len(files)
        if seen > MAX_LAYOUT_ENTRIES:
            c.add(directory, None, f"more than {MAX_LAYOUT_ENTRIES:,} files under this rules directory",
                  "pass the folder that holds findings/, checks/, ... (not a home or root directory)")
            return []
        found += [Path(root) / name for name in files if name.endswith((".yaml", ".yml")) and not name.startswith(".")]
    return sorted(found)


def _check_layout(c: IssueCollector, directory: Path) -> None:
    """Every YAML file must sit where a section reads it: a misplaced rule is an error, not ignored."""
    for path in _yaml_files(c, directory):
        rel = path.relative_to(directory)
        parts = rel.parts
        if path.suffix == ".yml":
            c.add(path, None, "rule files end in .yaml; this .yml file would never be read", f"rename it to {path.stem}.yaml")
        elif len(parts) == 1 and parts[0] not in TOP_FILES or len(parts) > 2 or \
                len(parts) == 2 and (parts[0] not in FOLDERS or parts[0] == "live" and parts[1] not in LIVE_FILES):
            c.add(path, None, f"{rel} is not a place rules are read from, so it would never be used",
                  f"put it in one of {', '.join(f + '/' for f in FOLDERS)} (live/ holds {', '.join(LIVE_FILES)}) "
                  f"or name it one of {', '.join(TOP_FILES)}")


EXPECTATION_FIELDS = {
    "doc": (_STR, False), "formula": (_STR, False), "min_message_bytes": ((int,), False),
    "links": (_LIST, False), "parity": (_DICT, False),
}
LINK_FIELDS = {
    "id": (_STR, True), "backend": (_STR, True), "transport": (_STR, True), "gpus": ((int,), False),
    "gpu_match": (_STR, False), "expected_busbw_gbps": ((int, float, type(None)), False),
    "slow_below_gbps": ((int, float, type(None)), False), "band_gbps": (_LIST, False), "per_nic": ((bool,), False),
    "source": (_STR, False),
}


def _load_expectations(c: IssueCollector, rs: RuleSet, directory: Path, verify: bool) -> None:
    """``expectations.yaml``: an overlay's link rows come first (first match wins) and replace rows of the
    same id; its parity.may_differ names are added; its other keys replace the base's."""
    path = directory / "expectations.yaml"
    if not path.exists():
        return
    data = load_yaml_file(c, path)
    if data is None or not _check_fields(c, path, data, EXPECTATION_FIELDS, "expectations"):
        return
    rows = []
    for i, row in enumerate(data.get("links") or []):
        if not _check_fields(c, path, row, LINK_FIELDS, f"links[{i}]"):
            continue
        if verify and row.get("gpu_match") is not None:
            problem = regex_problem(row["gpu_match"])
            if problem:
                c.add(path, row.line_of("gpu_match"), problem, "", f"links[{i}]")
                continue
        rows.append(row)
    parity = data.get("parity") or {}
    if parity and _check_fields(c, path, parity, {"may_differ": (_LIST, False)}, "parity"):
        may_differ = [*(rs.expectations.get("parity") or {}).get("may_differ", []), *parity.get("may_differ", [])]
        rs.expectations["parity"] = {"may_differ": may_differ}
    ids = {row["id"] for row in rows}
    rs.expectations.update({k: v for k, v in data.items() if k not in ("links", "parity")})
    rs.expectations["links"] = rows + [row for row in rs.expectations.get("links", []) if row["id"] not in ids]
    rs.sources[f"expectations:{directory}"] = str(path)


def _load_scan(c: IssueCollector, rs: RuleSet, directory: Path, verify: bool) -> None:
    paths = sorted((directory / "scan").glob("*.yaml"))
    if not paths:
        return
    from troubleshooter.scan.patterns import read_pattern_file

    for path in paths:
        data = load_yaml_file(c, path)
        if data is not None:
            read_pattern_file(c, path, data, rs.scan_patterns, verify)


SECTIONS = ("findings", "checks", "trees", "checklists", "pitfalls", "rationalizations", "expectations",
            "signatures", "scan", "launchers", "live", "symptoms")


def load_rules(extra_dirs: Iterable[Path] = (), base: Path | None = None, verify: bool = False,
               only: Iterable[str] = SECTIONS) -> RuleSet:
    """Load the shipped base (or ``base``) then each overlay in ``extra_dirs``; raise on any problem.

    ``verify`` also trial-renders the shipped base's templates and checks its regular expressions
    (overlays and an explicit ``base`` always get those checks). ``only`` loads some sections
    (a probe that needs the bandwidth table reads ``only=("expectations",)``); the layout and the
    references between files are checked when every section is loaded.
    """
    wanted = set(only)
    c = IssueCollector()
    rs = RuleSet()
    dirs = [(Path(base) if base else rules_dir(), verify or base is not None), *((Path(d), True) for d in extra_dirs)]
    for directory, untrusted in dirs:
        if not directory.is_dir():
            c.add(directory, None, "rules directory does not exist", "pass an existing folder to --rules")
            continue
        rs.dirs.append(directory)
        if wanted >= set(SECTIONS):
            _check_layout(c, directory)
        if "findings" in wanted:
            _load_findings(c, rs, directory, untrusted)
        if "checks" in wanted:
            _load_checks(c, rs, directory, untrusted)
        if "trees" in wanted:
            _load_trees(c, rs, directory)
        if "checklists" in wanted:
            _load_checklists(c, rs, directory)
        if "pitfalls" in wanted:
            rs.pitfalls = _load_table(c, directory / "pitfalls.yaml", "pitfalls", PITFALL_FIELDS) or rs.pitfalls
        if "rationalizations" in wanted:
            for row in _load_table(c, directory / "rationalizations.yaml", "rationalizations", RATIONALIZATION_FIELDS):
                rs.rationalizations[row["id"]] = row
        if "expectations" in wanted:
            _load_expectations(c, rs, directory, untrusted)
        if "signatures" in wanted:
            _load_signatures(c, rs, directory, untrusted)
        if "scan" in wanted:
            _load_scan(c, rs, directory, untrusted)
    if "launchers" in wanted or "live" in wanted:
        from troubleshooter.core.launchers import read_table
        rs.launchers = read_table(rs.dirs, c.issues)
    if "symptoms" in wanted:
        from troubleshooter.logs.symptomwords import read_words
        rs.symptom_words = read_words(rs.dirs, c.issues, verify=any(untrusted for _, untrusted in dirs))
    if "live" in wanted:
        from troubleshooter.live.rules import read_live_rules
        rs.live = read_live_rules(c, rs.dirs, set(rs.findings), rs.launchers)
    if wanted >= set(SECTIONS):
        _cross_check(c, rs)
    if c.issues:
        raise RuleFileError(c.issues)
    return rs


def _cross_check(c: IssueCollector, rs: RuleSet) -> None:
    """References between files: finding ids, tree targets, reachability, probes are checked in rulecheck."""
    known = set(rs.findings)

    def need_finding(kind_id: str, ident: Any, line: int | None, crumb: str = "") -> None:
        if ident not in known:
            close = difflib.get_close_matches(str(ident), known, n=1)
            c.add(rs.sources[kind_id], line, f"unknown finding id {ident!r}",
                  f"did you mean {close[0]!r}?" if close else "add rules/findings/<id>.yaml or use an id from diagnosis-ids.md",
                  crumb)

    for fid, finding in rs.findings.items():
        for i, other in enumerate(finding.get("explains") or []):
            need_finding(f"finding:{fid}", other, finding["explains"].line_of(i), "explains")
    for check_id in rs.cases:
        if check_id not in rs.checks:
            c.add(rs.sources[f"cases:{check_id}"], None, f"fixture cases for a check {check_id!r} that does not exist",
                  f"add checks/{check_id}.yaml or rename the cases file")
    for cid, check in rs.checks.items():
        need_finding(f"check:{cid}", check["finding"], check.line_of("finding"))
        for ref in conditions.findings_read(check["when"]):
            need_finding(f"check:{cid}", ref, check.line_of("when"), "when")
    for tid, tree in rs.trees.items():
        nodes = tree["nodes"]
        for node_id, node in nodes.items():
            if not isinstance(node, dict):
                continue
            crumb = f"nodes › {node_id}"
            targets = [(f"answer {label!r}", t) for label, t in (node.get("answers") or {}).items()] + [
                (f"then[{i}]", b.get("goto")) for i, b in enumerate(node.get("then") or []) if isinstance(b, dict)]
            if node.get("else"):
                targets.append(("else", node["else"]))
            for label, target in targets:
                if target not in nodes:
                    close = difflib.get_close_matches(str(target), list(nodes), n=1)
                    c.add(rs.sources[f"tree:{tid}"], node.line, f"{label} goes to undefined node {target!r}",
                          f"did you mean {close[0]!r}?" if close else "define the node under nodes", crumb)
            if "conclude" in node:
                concl = node["conclude"] if isinstance(node["conclude"], list) else [node["conclude"]]
                for ident in concl:
                    if ident != "none":
                        need_finding(f"tree:{tid}", ident, node.line_of("conclude"), crumb)
            for i, ident in enumerate(node.get("counters") or []):
                if ident not in rs.rationalizations:
                    c.add(rs.sources[f"tree:{tid}"], node.line_of("counters"), f"unknown rationalization {ident!r}",
                          "define it in rationalizations.yaml", crumb)
        for node_id in sorted(set(nodes) - reachable_nodes(tree)):
            c.add(rs.sources[f"tree:{tid}"], nodes.line_of(node_id), f"node {node_id!r} is unreachable from start",
                  "link it from another node or delete it", f"nodes › {node_id}")
    for row in rs.pitfalls:
        if row["id"] not in known:
            c.add(str(rs.dirs[0] / "pitfalls.yaml"), row.line_of("id"), f"unknown finding id {row['id']!r}", "", "pitfalls")
    for chk_id, checklist in rs.checklists.items():
        for group in checklist.get("groups") or []:
            for item in (group.get("items") or []) if isinstance(group, dict) else []:
                if isinstance(item, dict) and item.get("finding") and item["finding"] not in known:
                    need_finding(f"checklist:{chk_id}", item["finding"], item.line_of("finding"), item.get("id", ""))
    stuck = rs.symptom_words.get("stuck_ranks")
    if stuck and stuck["finding"] not in known:
        c.add(next((str(d / "symptoms.yaml") for d in reversed(rs.dirs) if (d / "symptoms.yaml").exists()), "symptoms.yaml"),
              stuck.line_of("finding") if hasattr(stuck, "line_of") else None,
              f"unknown finding id {stuck['finding']!r}", "stuck_ranks.finding names the collective-timeout finding",
              "stuck_ranks")


def reachable_nodes(tree: dict) -> set[str]:
    """Node ids reachable from the tree's start."""
    nodes, seen, todo = tree["nodes"], set(), [tree["start"]]
    while todo:
        node_id = todo.pop()
        if node_id in seen or node_id not in nodes or not isinstance(nodes[node_id], dict):
            continue
        seen.add(node_id)
        node = nodes[node_id]
        todo += list((node.get("answers") or {}).values())
        todo += [b.get("goto") for b in node.get("then") or [] if isinstance(b, dict)]
        if node.get("else"):
            todo.append(node["else"])
    return seen
