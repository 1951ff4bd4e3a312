"""collective-mismatch: a collective (or a function that runs one) called on some ranks only."""

from __future__ import annotations

from troubleshooter.scan.checkers import Checker, Hit
from troubleshooter.scan.checkers._common import collective_names
from troubleshooter.scan.model import NONZERO, RANK0

_OPPOSITE = {RANK0: NONZERO, NONZERO: RANK0}


class CollectiveMismatchChecker(Checker):
    """A collective under a rank-dependent branch with no matching call on the other ranks' side."""

    id = "collective-mismatch"

    def check(self, m):
        names = collective_names(m)
        runs = self._functions_with_collectives(m, names)
        candidates = []
        for site in m.calls:
            if site.name in names:
                label = site.name.rpartition(".")[2]
            elif site.node.func.__class__.__name__ == "Name" and site.name in runs:
                label = f"{site.name}()"
            else:
                continue
            if site.ctx.sides:
                candidates.append((site, label))
        for site, label in candidates:
            if self._balanced(site, label, candidates):
                continue
            where = "rank 0 only" if site.rank0 else "some ranks only"
            inner = f" (it runs {runs[site.name]})" if label.endswith("()") else ""
            yield Hit(site.line, f"{label}{inner} is called on {where}: the other ranks never enter it, so it "
                                 "blocks until the collective times out", {"variable": label})

    @staticmethod
    def _balanced(site, label, candidates) -> bool:
        arms = {bid: arm for bid, _, arm in site.ctx.sides}
        side = site.ctx.sides[-1][1]
        for other, other_label in candidates:
            if other is site or other_label != label or other.ctx.func is not site.ctx.func:
                continue
            if any(arms.get(bid, arm) != arm for bid, _, arm in other.ctx.sides):
                return True  # the other arm of the same rank test (if / elif / else) calls it too
            if side in _OPPOSITE and other.ctx.sides[-1][1] == _OPPOSITE[side]:
                return True  # rank 0 and the other ranks call it at different places (zero-first)
        return False

    @staticmethod
    def _functions_with_collectives(m, names) -> dict[str, str]:
        """Local function name -> the collective it (transitively) runs, for unconditional runs."""
        runs: dict[str, str] = {}
        for _ in range(3):
            for site in m.calls:
                func = site.ctx.func
                if func is None or func.cls or func.name in runs or site.ctx.sides:
                    continue
                if site.name in names:
                    runs[func.name] = f"{site.name.rpartition('.')[2]} at line {site.line}"
                elif site.name in runs:
                    runs[func.name] = f"{site.name}() at line {site.line}"
        return runs


CHECKER = CollectiveMismatchChecker()
