"""Small commands: ``rules check|list|facts``, ``report``, ``probe NAME``, ``--list-probes``."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from troubleshooter.core.errors import RuleFileError
from troubleshooter.core.registry import Registry
from troubleshooter.report.document import emit, exit_code, load_report
from troubleshooter.core.ruleset import load_rules


def list_probes(args: argparse.Namespace) -> int:
    """Print the probes with scope, default and timeout (does not import torch)."""
    registry = Registry.load(args.probes)
    for probe in sorted(registry.probes.values(), key=lambda p: (p.order, p.id)):
        flag = "default" if probe.default else "opt-in"
        print(f"{probe.id:<12} {probe.scope:<6} {flag:<8} {probe.timeout_s:>5g}s  {probe.title}")
    return 0


def rules_command(args: argparse.Namespace) -> int:
    """check: validate (exit 2 with every error); list: the base; facts: every declared fact."""
    from troubleshooter.core.rulecheck import run_check

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
        from troubleshooter.core.factcatalog import all_fact_specs
        specs = all_fact_specs(load_rules(args.rules), Registry.load(args.probes))
        for key in sorted(specs):
            print(f"{key:<44} {specs[key].type:<6} {specs[key].doc}")
        return 0
    from troubleshooter.core.engine import render_text

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
    """Run one probe the way ``--auto`` runs it (NODE isolated here, RANK/WORLD in a local world) and report."""
    from troubleshooter.cli.auto import run_options
    from troubleshooter.report.document import choose_format, write_output
    from troubleshooter.run.plan import run_probes
    from troubleshooter.run.session import Session

    opts = run_options(args).with_(only=(args.name,), skip=())
    rules = load_rules(list(opts.rules_dirs))
    registry = Registry.load(list(opts.probe_dirs))
    registry.get(args.name)
    session = Session(rules, "probe")
    run_probes(session, registry, opts)
    doc = session.report()
    if choose_format(args.format, args.output, "text") == "json":
        emit(doc, "json", args.output)
    else:
        from troubleshooter.report.render import render_terminal
        text = render_terminal(doc, color=sys.stdout.isatty() and not args.output)
        facts = [f"  {k} = {v}" for r in session.results for k, v in sorted(r.facts.items())]
        write_output("\n".join(facts) + "\n\n" + text if facts else text, args.output)
    return exit_code(doc)


def tui_command(args: argparse.Namespace) -> int:
    """Open the interactive troubleshooter with the command line's options."""
    from troubleshooter.cli.auto import run_options
    from troubleshooter.tui import run_app

    return run_app(run_options(args))
