"""``troubleshoot scan PATH... [--format text|json|sarif|md|html] [-o PATH] [--rules DIR]``.

Exit codes: 0 no finding of severity warning or worse, 1 such findings, 2 an unreadable path
(the readable ones are still scanned and reported).
"""

from __future__ import annotations

import sys

from troubleshooter.scan import scan_paths


def command(args) -> int:
    """Scan, evaluate the hits with the rules engine, write the chosen format; return the exit code."""
    from troubleshooter.core.engine import Observations, evaluate
    from troubleshooter.core.facts import Facts
    from troubleshooter.report.document import build_report, choose_format, exit_code, write_output
    from troubleshooter.core.ruleset import load_rules
    from troubleshooter.scan.output import render_sarif, render_text

    rules_dirs = list(getattr(args, "rules", None) or [])
    rules = load_rules(rules_dirs)
    result = scan_paths(list(args.paths), rules)
    for problem in result.internal_errors:
        print(f"troubleshoot scan: warning: {problem}", file=sys.stderr)
    facts = {"run.mode": "scan", **result.facts}
    obs = Observations(Facts.from_dict(facts, "scan"))
    findings = evaluate(rules, obs)
    doc = build_report("scan", findings, obs=obs, extra={"unreadable": result.unreadable} if result.unreadable else None)
    fmt = choose_format(args.format, args.output, "text")
    if fmt == "sarif":
        text = render_sarif(doc, rules.findings)
    elif fmt in ("json", "md", "html"):
        from troubleshooter.report.render import render
        text = render(doc, fmt)
    else:
        text = render_text(doc, result.unreadable)
    write_output(text, args.output)
    if result.unreadable:
        if fmt != "text":
            for problem in result.unreadable:
                print(f"troubleshoot scan: error: {problem}", file=sys.stderr)
        return 2
    return exit_code(doc)
