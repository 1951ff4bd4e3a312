"""unsynced-dropout-rng: a DDP model's forward branches on a random draw, so ranks take different paths."""

from __future__ import annotations

from troubleshooter.scan.checkers import Checker, Hit
from troubleshooter.scan.checkers._common import wrapped_name
from troubleshooter.scan.checkers._modules import wrapped_classes


class UnsyncedDropoutRngChecker(Checker):
    """``if random.random() < p:`` (layer drop, stochastic depth) in the forward of a DDP-wrapped model."""

    id = "unsynced-dropout-rng"

    def check(self, m):
        for wrap, cls in wrapped_classes(m):
            model = wrapped_name(wrap) or "model"
            for line, test in cls.random_branches:
                yield Hit(line, f"{cls.name}.forward branches on `{test}`: each rank draws its own random number, "
                                f"so ranks skip different layers and DDP({model})'s gradient buckets diverge "
                                "(hang or 'Expected to have finished reduction')",
                          {"model": model, "variable": test})


CHECKER = UnsyncedDropoutRngChecker()
