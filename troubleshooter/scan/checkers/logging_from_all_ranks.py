"""logging-from-all-ranks: per-step printing, experiment tracking or checkpoint writing on every rank."""

from __future__ import annotations

from troubleshooter.scan.checkers import Checker, Hit
from troubleshooter.scan.model import last


class LoggingFromAllRanksChecker(Checker):
    """Unguarded wandb/TensorBoard/torch.save anywhere, and print/logger calls inside loops."""

    id = "logging-from-all-ranks"

    def check(self, m):
        P = m.P
        silenced = bool(m.calls_to(P.print_silencers)) or any(
            last(name) == "print" and name != "print" for name in m.bindings) or (
            m.project is not None and m.project.print_silenced)
        levels_by_rank = any(s.method in P.log_level_setters
                             and (s.rank_conditional or m.mentions_rank(s.node)) for s in m.calls)
        loggers = self._loggers(m)
        for site in m.calls:
            if site.rank0 or m.mentions_rank(site.node):
                continue
            what = None
            if site.name in P.tracker_calls:
                if site.name == "wandb.init" and site.kw("group") is not None:
                    continue
                what = f"{site.name}() runs on every rank: one run/event file per rank, duplicated or clashing metrics"
            elif site.name in P.checkpoint_writers or site.method in P.checkpoint_writers and site.recv:
                if site.kw("is_main_process") is not None:
                    continue
                what = (f"{site.name or site.method}() writes the checkpoint from every rank at once: concurrent "
                        "writes to one file can leave it torn")
            elif self._in_training_loop(m, site) and site.name in P.print_calls and not silenced:
                what = "print() inside the training loop runs on every rank: each line is repeated once per rank"
            elif (self._in_training_loop(m, site) and site.recv in loggers and site.method in P.logging_methods
                  and not levels_by_rank):
                what = f"{site.recv}.{site.method}() inside the loop runs on every rank: each line is repeated per rank"
            if what:
                name = site.name or f"{site.recv}.{site.method}"
                yield Hit(site.line, f"{what}; guard it with `if rank == 0:`", {"variable": name})

    @staticmethod
    def _in_training_loop(m, site) -> bool:
        """The innermost loop around the call steps an optimizer (a per-step line, not a per-epoch one)."""
        return bool(site.ctx.loops) and m.is_training_loop(site.ctx.loops[-1])

    @staticmethod
    def _loggers(m) -> set[str]:
        names = {alias for alias, qual in m.aliases.items() if qual in m.P.logging_modules}
        for target, bindings in m.bindings.items():
            for b in bindings:
                made = m.site_of(b.value) if hasattr(b.value, "func") else None
                if made is not None and made.method in m.P.logger_factories:
                    names.add(target)
        return names


CHECKER = LoggingFromAllRanksChecker()
