"""nccl-tuning-before-profiling: NCCL performance variables set in the training code."""

from __future__ import annotations

import ast

from troubleshooter.scan.checkers import Checker, Hit
from troubleshooter.scan.model import const


class NcclTuningBeforeProfilingChecker(Checker):
    """``os.environ["NCCL_ALGO"] = ...``, ``os.environ.setdefault/update``, ``os.putenv`` for tuning variables."""

    id = "nccl-tuning-before-profiling"
    distributed_only = False
    triggers = ("NCCL_",)

    def check(self, m):
        tuning = m.P.nccl_tuning_vars
        for line, var in self._sets(m):
            if var in tuning:
                yield Hit(line, f"{var} is tuned in code: NCCL tuning helps only a communication-bound job, and "
                                "nothing here shows a profile that found one (it can also slow or hang other "
                                "topologies)", {"variable": var})

    @staticmethod
    def _sets(m):
        for node in ast.walk(m.tree):
            if isinstance(node, ast.Assign):
                for target in node.targets:
                    if isinstance(target, ast.Subscript) and m.qual(target.value) == "os.environ":
                        key = const(target.slice)
                        if isinstance(key, str):
                            yield node.lineno, key
        for site in m.calls:
            if site.name in ("os.environ.setdefault", "os.putenv") and isinstance(const(site.arg(0)), str):
                yield site.line, const(site.arg(0))
            elif site.name == "os.environ.update":
                for kw in site.node.keywords:
                    if kw.arg:
                        yield site.line, kw.arg
                mapping = site.arg(0)
                if isinstance(mapping, ast.Dict):
                    for key in mapping.keys:
                        if isinstance(const(key), str):
                            yield site.line, const(key)


CHECKER = NcclTuningBeforeProfilingChecker()
