"""no-barrier-before-checkpoint-load: rank 0 saves a checkpoint and every rank loads it with no barrier between."""

from __future__ import annotations

import ast

from troubleshooter.scan.checkers import Checker, Hit
from troubleshooter.scan.model import source

_SIMPLE = (ast.Name, ast.Attribute, ast.Constant, ast.JoinedStr)
# Rank 0 broadcasting after its save also makes the others wait for it.
_BROADCASTS = ("broadcast", "broadcast_object_list")


class NoBarrierBeforeCheckpointLoadChecker(Checker):
    """A rank-0-only torch.save, then torch.load of the same path on every rank, no barrier in between."""

    id = "no-barrier-before-checkpoint-load"

    def check(self, m):
        saves = [s for s in m.calls_named(["torch.save"]) if s.rank0]
        loads = [s for s in m.calls_named(["torch.load"]) if not s.rank_conditional]
        for load in loads:
            path = load.arg(0, "f")
            for save in saves:
                target = save.arg(1, "f")
                if save.ctx.func is not load.ctx.func or save.line >= load.line or path is None or target is None:
                    continue
                if not (isinstance(path, _SIMPLE) and ast.dump(path) == ast.dump(target)):
                    continue
                if self._synced_between(m, save, load):
                    continue
                text = source(path)
                yield Hit(load.line, f"torch.load({text}) runs on every rank right after rank 0 saves it (line "
                                     f"{save.line}) with no barrier: the other ranks can read a missing or half-written "
                                     "file", {"variable": text})
                break

    @staticmethod
    def _synced_between(m, save, load) -> bool:
        barriers = m.P.barrier_methods
        barrier_funcs = {name for name, infos in m.functions.items()
                         if any(s.method in barriers for info in infos for s in m.sites_in(info.node))}
        for site in m.calls:
            if save.line < site.line < load.line and (
                    site.method in barriers or site.method in _BROADCASTS or site.method in barrier_funcs):
                return True
        return False


CHECKER = NoBarrierBeforeCheckpointLoadChecker()
