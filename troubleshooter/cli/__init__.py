"""The command line of design.md. ``main(argv)`` returns the exit code.

Exit codes: 0 no finding of severity warning or worse; 1 such findings; 2 bad usage or
bad input; 3 internal error; 130 interrupted (Ctrl-C; what was gathered is still reported). Only the standard library is imported at module level so
``troubleshoot --help`` stays fast (torch is never imported here).
"""

from __future__ import annotations

import argparse
import sys
from typing import Sequence

from troubleshooter import __version__
from troubleshooter.core.errors import TroubleshooterError, UsageError

EXIT_CLEAN, EXIT_FINDINGS, EXIT_USAGE, EXIT_INTERNAL = 0, 1, 2, 3


def _output_args(p: argparse.ArgumentParser, formats: Sequence[str], default: str) -> None:
    p.add_argument("--format", choices=formats, default=None, help=f"output format (default: {default}, "
                   "or from the -o file's extension)")
    p.add_argument("-o", "--output", metavar="PATH", help="write the report here (default: standard output)")


def _job_args(g) -> None:
    """What the user's job uses, when the probes cannot see it themselves."""
    g.add_argument("--grad-accum", type=int, default=None, metavar="K", help="gradient-accumulation steps your job uses")
    g.add_argument("--num-workers", type=int, default=None, metavar="N", help="DataLoader workers per rank your job uses")
    g.add_argument("--precision", choices=["fp32", "fp16", "bf16"], default=None, help="precision your job trains in")
    g.add_argument("--launcher", choices=["torchrun", "slurm", "mpirun", "deepspeed"], default=None,
                   help="launcher your job uses (checks its tools)")
    g.add_argument("--hostfile", metavar="PATH", default=None, help="DeepSpeed/MPI hostfile your job uses")


DIR_OPTIONS = ("rules", "probes")


def _world_args(g) -> None:
    """Options of the world the probes run on and of the user's job: shared by --auto and probe NAME."""
    g.add_argument("--nproc", type=int, default=2, metavar="N", help="ranks of the local world when no launcher is around (default 2)")
    g.add_argument("--backend", choices=["auto", "gloo", "nccl"], default="auto", help="process-group backend (default: nccl when every rank has a GPU, else gloo)")
    g.add_argument("--model", metavar="MODULE:CALLABLE", help="zero-argument callable returning your nn.Module (imported, runs your code)")
    g.add_argument("--data", metavar="MODULE:CALLABLE", help="zero-argument callable returning a Dataset or iterable of batches")
    g.add_argument("--timeout", type=float, default=None, metavar="S", help="per-probe timeout in seconds (default: each probe's own)")
    _job_args(g)


def _dirs_arg(p, flag: str, help: str | None = None) -> None:
    """``--rules DIR`` / ``--probes DIR`` of a sub-command, kept apart and added to those given before it.

    A sub-parser fills its own namespace and would replace the main parser's list, so
    ``troubleshoot --rules A logs x.log --rules B`` reads A and B (see :func:`_merge_dirs`).
    """
    p.add_argument(flag, action="append", dest=f"{flag[2:]}_after_command", default=[], metavar="DIR", help=help)


def _merge_dirs(args: argparse.Namespace) -> argparse.Namespace:
    for name in DIR_OPTIONS:
        after = vars(args).pop(f"{name}_after_command", [])
        setattr(args, name, [*getattr(args, name, []), *after])
    return args


def _auto_args(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("automatic diagnosis (--auto)")
    g.add_argument("--auto", action="store_true", help="run every default check non-interactively and write a report")
    _world_args(g)
    g.add_argument("--script", action="append", default=[], metavar="PATH", help="training script(s) to scan statically (never executed)")
    g.add_argument("--log", action="append", default=[], metavar="PATH", help="log file(s) of a failed run to analyse")
    g.add_argument("--probe", action="append", default=[], metavar="NAME", help="run only these probes (repeatable)")
    g.add_argument("--skip", action="append", default=[], metavar="NAME", help="skip these probes (repeatable)")
    g.add_argument("--rules", action="append", default=[], metavar="DIR", help="extra site-specific rules directory")
    g.add_argument("--probes", action="append", default=[], metavar="DIR", help="extra probe plugin directory")
    g.add_argument("--list-probes", action="store_true", help="list the available probes and exit")
    g.add_argument("--no-color", action="store_true", help="plain terminal output")
    g.add_argument("-q", "--quiet", action="store_true", help="print only the summary line")
    _output_args(g, ["md", "html", "json"], "md")


def build_parser() -> argparse.ArgumentParser:
    """The argument parser (top level = TUI / --auto; subcommands for the rest)."""
    parser = argparse.ArgumentParser(
        prog="troubleshoot",
        description="Diagnose PyTorch DistributedDataParallel problems: hangs, slow start-up, slow training, "
                    "diverging ranks, device errors, NCCL/gloo failures. Without arguments it opens the "
                    "interactive troubleshooter.",
        epilog="Exit codes: 0 no warning or error found, 1 findings, 2 bad usage or input, 3 internal error, "
               "130 interrupted (Ctrl-C: the report of what was gathered is still written).",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    _auto_args(parser)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    p = sub.add_parser("scan", help="statically scan training scripts for DDP pitfalls (parses, never runs)")
    p.add_argument("paths", nargs="+", metavar="PATH")
    _dirs_arg(p, "--rules")
    _output_args(p, ["text", "json", "sarif", "md", "html"], "text")

    p = sub.add_parser("logs", help="analyse logs of a distributed run (PATH may be - for stdin, .gz is fine)")
    p.add_argument("paths", nargs="+", metavar="PATH")
    _dirs_arg(p, "--rules")
    _output_args(p, ["text", "json", "md", "html"], "text")

    p = sub.add_parser("probe", help="run one probe and show its facts and the findings they imply")
    p.add_argument("name")
    _world_args(p)
    _dirs_arg(p, "--rules")
    _dirs_arg(p, "--probes")
    _output_args(p, ["text", "json"], "text")

    p = sub.add_parser("report", help="re-render a saved JSON diagnosis")
    p.add_argument("diagnosis", metavar="DIAGNOSIS.json")
    _output_args(p, ["md", "html", "json"], "md")

    p = sub.add_parser("rules", help="check or list the knowledge base")
    rsub = p.add_subparsers(dest="rules_command", metavar="check|list|facts", required=True)
    rc = rsub.add_parser("check", help="validate the rules (file:line errors, exit 2 when broken)")
    rc.add_argument("dir", nargs="?", help="check this rules directory instead of the shipped one")
    _dirs_arg(rc, "--rules", "overlay directory")
    _dirs_arg(rc, "--probes")
    rl = rsub.add_parser("list", help="list findings, checks and decision trees")
    rl.add_argument("--format", choices=["text", "md", "json"], default="text")
    _dirs_arg(rl, "--rules")
    rf = rsub.add_parser("facts", help="list every fact a rule may read")
    _dirs_arg(rf, "--rules")
    _dirs_arg(rf, "--probes")

    p = sub.add_parser("attach", help="inspect a running job on this node: every rank's stack, who is stuck where")
    p.add_argument("pid", nargs="?", type=int, help="launcher or rank PID (default: find the job)")
    p.add_argument("--job", choices=["auto"], default=None, help="find the job automatically (the default without PID)")
    p.add_argument("--native", action="store_true", help="include native frames (py-spy --native)")
    _dirs_arg(p, "--rules")
    _output_args(p, ["text", "json"], "text")

    p = sub.add_parser("run", help="run a launch command under watch; report on failure or stall")
    p.add_argument("--stall", type=float, default=300.0, metavar="S", help="seconds without progress that count as a hang")
    p.add_argument("--log-file", metavar="PATH", help="where to keep the job's output (default: troubleshoot-run.log)")
    _dirs_arg(p, "--rules")
    _output_args(p, ["md", "html", "json"], "md")
    p.add_argument("launch", nargs=argparse.REMAINDER, metavar="-- LAUNCH COMMAND...")

    p = sub.add_parser("launch", help="write a ready-to-submit script that runs the diagnosis across nodes")
    p.add_argument("--launcher", choices=["slurm", "torchrun", "mpirun", "deepspeed"], required=True)
    p.add_argument("--nodes", type=int, required=True)
    p.add_argument("--gpus-per-node", type=int, required=True)
    p.add_argument("--partition")
    p.add_argument("--master-addr")
    p.add_argument("--master-port", type=int, default=29500)
    p.add_argument("-o", "--output", metavar="PATH")
    return parser


# command -> "module:function(args) -> exit code"; modules are imported only when their command runs
HANDLERS = {
    "rules": "troubleshooter.cli.commands:rules_command",
    "report": "troubleshooter.cli.commands:report_command",
    "probe": "troubleshooter.cli.commands:probe_command",
    "scan": "troubleshooter.cli.scan:command",
    "logs": "troubleshooter.cli.logs:command",
    "attach": "troubleshooter.cli.attach:command",
    "run": "troubleshooter.cli.run:command",
    "launch": "troubleshooter.cli.launch:command",
    "--list-probes": "troubleshooter.cli.commands:list_probes",
    "--auto": "troubleshooter.cli.auto:command",
    "tui": "troubleshooter.cli.commands:tui_command",
}


def _dispatch(args: argparse.Namespace) -> int:
    import importlib

    name = args.command or ("--list-probes" if args.list_probes else "--auto" if args.auto else "tui")
    if name not in HANDLERS:
        raise UsageError(f"unknown command {name!r}")
    module, func = HANDLERS[name].split(":")
    return getattr(importlib.import_module(module), func)(args)


def _error(text: str) -> None:
    """An error message can quote the user's input: secrets masked, control characters shown."""
    from troubleshooter.report.inert import visible
    from troubleshooter.report.redact import redact_text

    print(visible(redact_text(text)), file=sys.stderr)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``troubleshoot``; returns the exit code."""
    parser = build_parser()
    try:
        args = _merge_dirs(parser.parse_args(argv))
    except SystemExit as exc:  # argparse: --help/--version exit 0, bad usage exits 2
        return int(exc.code or 0)
    try:
        return _dispatch(args)
    except TroubleshooterError as exc:
        _error(f"{exc.title}:\n{exc.message}" if exc.exit_code == EXIT_USAGE and "\n" in exc.message
               else f"troubleshoot: error: {exc.message}")
        return exc.exit_code
    except KeyboardInterrupt:
        print("troubleshoot: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return EXIT_CLEAN
    except Exception as exc:  # never a bare traceback for the user
        import traceback
        where = traceback.extract_tb(exc.__traceback__)[-1]
        _error(f"troubleshoot: internal error: {type(exc).__name__}: {exc}\n  at {where.filename}:{where.lineno}\n"
               "  please report this with the command you ran")
        return EXIT_INTERNAL
