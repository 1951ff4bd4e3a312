"""nccl-tuning-before-profiling: NCCL performance variables set in the training code.

Advice (info) from the scan alone: code cannot show whether a profile chose the values (maintainers pin NCCL_ALGO or
NCCL_NVLS_ENABLE after measuring, or to avoid a known NCCL bug). The finding's fix still asks for a profiled step
(its gate) before any value is kept.
"""

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
                                "topologies)", {"variable": var}, severity="info")

    @staticmethod
    def _sets(m):
        """(line, variable) for each NCCL variable the code sets to a value of its own (a literal): a value
        forwarded from the user's configuration or command line (``str(nccl_config["nsocks_perthread"])``, mmf) is
        the user's tuning, not the script's."""
        for node in ast.walk(m.tree):
            if isinstance(node, ast.Assign) and _literal(node.value):
                for target in node.targets:
                    if isinstance(target, ast.Subscript) and m.qual(target.value) == "os.environ":
                        key = const(target.slice)
                        if isinstance(key, str):
                            yield node.lineno, key
        for site in m.calls:
            if site.name in ("os.environ.setdefault", "os.putenv") and isinstance(const(site.arg(0)), str) and (
                    _literal(site.arg(1))):
                yield site.line, const(site.arg(0))
            elif site.name == "os.environ.update":
                for kw in site.node.keywords:
                    if kw.arg and _literal(kw.value):
                        yield site.line, kw.arg
                mapping = site.arg(0)
                if isinstance(mapping, ast.Dict):
                    for key, value in zip(mapping.keys, mapping.values):
                        if isinstance(const(key), str) and _literal(value):
                            yield site.line, const(key)


def _literal(value: ast.AST | None) -> bool:
    """A value written in the code: ``"8"``, ``8``, ``str(8)``, an f-string of literals."""
    if value is None:
        return False
    if isinstance(value, ast.Call) and len(value.args) == 1 and not value.keywords:
        return _literal(value.args[0])  # str(8)
    if isinstance(value, ast.JoinedStr):
        return all(isinstance(part, ast.Constant) or _literal(getattr(part, "value", None)) for part in value.values)
    return const(value) is not None


CHECKER = NcclTuningBeforeProfilingChecker()
