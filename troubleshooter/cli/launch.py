"""``troubleshoot launch``: write a ready-to-submit script that runs the distributed diagnosis."""

from __future__ import annotations

import argparse
import stat
import sys
from pathlib import Path

from troubleshooter.launch.scripts import render_script
from troubleshooter.report.document import write_output


def command(args: argparse.Namespace) -> int:
    """Write the script to ``-o`` (made executable) or print it."""
    name = Path(args.output).name if args.output and args.output != "-" else f"troubleshoot-{args.launcher}.sh"
    text = render_script(args.launcher, args.nodes, args.gpus_per_node, args.partition, args.master_addr,
                         args.master_port, name)
    write_output(text, args.output)
    if args.output and args.output != "-":
        path = Path(args.output)
        path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
        how = {"slurm": f"sbatch {path}", "mpirun": f"{path}"}.get(args.launcher, f"{path} NODE_RANK  (on every node)")
        print(f"wrote {path}; run: {how}", file=sys.stderr)
    return 0
