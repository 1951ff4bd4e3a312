"""Small commands: ``rules check|list|facts``, ``report``, ``probe NAME``, ``--list-probes``."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from troubleshooter.errors import RuleFileError
from troubleshooter.probe import NODE, ProbeResult
from troubleshooter.registry import Registry
from troubleshooter.report import emit, exit_code, load_report
from troubleshooter.ruleset import load_rules


def list_probes(args: argparse.Namespace) -> int:
    """Print the probes with scope, default and timeout (does not import torch)."""
    registry = Registry.load(args.probes)
    for probe in sorted(registry.probes.values(), key=lambda p: (p.order, p.id)):
        flag = "default" if probe.default else "opt-in"
        print(f"{probe.id:<12} {probe.scope:<6} {flag:<8} {probe.timeout_s:>5g}s  {probe.title}")
    return 0


def rules_command(args: argparse.Namespace) -> int:
    """check: validate (exit 2 with every error); list: the base; facts: every declared fact."""
    from troubleshooter.rulecheck import run_check

    if args.rules_command == "check":
        base = Path(args.dir) if args.dir else None
        try:
            rules, registry = run_check(args.rules, args.probes, base=base)
        except RuleFileError as exc:
            print(exc.message, file=sys.stderr)
            return exc.exit_code
        print(f"ok: {len(rules.findings)} findings, {len(rules.checks)} checks, {len(rules.trees)} trees, "
              f"{sum(len(g['items']) for c in rules.checklists.values() for g in c['groups'])} checklist items, "
              f"{len(rules.rationalizations)} rationalizations, {len(rules.signatures)} log signatures, "
              f"{len(registry.probes)} probes")
        return 0
    if args.rules_command == "facts":
        from troubleshooter.factcatalog import all_fact_specs
        specs = all_fact_specs(load_rules(), Registry.load(args.probes))
        for key in sorted(specs):
            print(f"{key:<44} {specs[key].type:<6} {specs[key].doc}")
        return 0
    from troubleshooter.engine import render_text

    rules = load_rules(args.rules)
    empty = {"facts": {}, "evidence": [], "hit": {}, "ranks": [], "first": None}
    titles = {fid: " ".join(render_text(f["title"], empty).split()) for fid, f in rules.findings.items()}
    if args.format == "json":
        print(json.dumps({"findings": {k: {"title": titles[k], "severity": v["severity"], "category": v["category"]}
                                       for k, v in rules.findings.items()},
                          "checks": {k: v["finding"] for k, v in rules.checks.items()},
                          "trees": {k: v["title"] for k, v in rules.trees.items()}}, indent=2))
        return 0
    md = args.format == "md"
    print("| id | severity | category | title |\n|---|---|---|---|" if md else "Findings:")
    for fid, f in sorted(rules.findings.items()):
        print(f"| `{fid}` | {f['severity']} | {f['category']} | {titles[fid]} |" if md else
              f"  {f.get('code', ''):<7} {fid:<36} {f['severity']:<8} {titles[fid]}")
    if not md:
        print("Decision trees:")
        for tid, tree in sorted(rules.trees.items(), key=lambda t: (t[1].get("order", 99), t[0])):
            print(f"  {tid:<28} {tree['symptom']}")
    return 0


def report_command(args: argparse.Namespace) -> int:
    """Re-render a saved diagnosis; the exit code reflects its findings."""
    doc = load_report(args.diagnosis)
    emit(doc, args.format, args.output, default="md")
    return exit_code(doc)


def probe_command(args: argparse.Namespace) -> int:
    """Run one probe (NODE probes isolated here; RANK/WORLD probes in a local world) and report."""
    from troubleshooter.auto import options_from_args
    from troubleshooter.session import Session

    rules = load_rules(args.rules)
    registry = Registry.load(args.probes)
    probe = registry.get(args.name)
    options = options_from_args(args)
    session = Session(rules, "probe")
    if probe.scope == NODE:
        from troubleshooter.runner import run_isolated
        session.add_result(run_isolated(probe, dict(os.environ), options, {}, args.probes, args.timeout))
        session.world = {"size": 1, "backend": None, "launcher": "local"}
    else:
        from troubleshooter.localworld import run_world
        outcome = run_world([probe], args.nproc, backend=args.backend, options=options, probe_dirs=args.probes,
                            timeout_s=args.timeout)
        for results in outcome.results.values():
            for result in results:
                session.add_result(result)
        session.world_facts.update(outcome.world_facts)
        session.world_facts.update({"world.size": args.nproc, "world.launcher": "local"})
        session.world = {"size": args.nproc, "backend": outcome.backend, "launcher": "local"}
    doc = session.report()
    if args.format == "json" or (args.format is None and args.output and args.output.endswith(".json")):
        emit(doc, "json", args.output)
    else:
        from troubleshooter.render import render_terminal
        text = render_terminal(doc, color=sys.stdout.isatty() and not args.output)
        facts = [f"  {k} = {v}" for r in session.results for k, v in sorted(r.facts.items())]
        body = "\n".join(facts) + "\n\n" + text if facts else text
        from troubleshooter.report import write_output
        write_output(body, args.output)
    return exit_code(doc)


def result_line(result: ProbeResult) -> str:
    """One-line summary of a probe result."""
    return f"{result.probe} [{result.status}] {result.message}"
