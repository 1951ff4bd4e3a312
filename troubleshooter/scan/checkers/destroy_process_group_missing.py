"""destroy-process-group-missing: init_process_group without destroy_process_group at exit."""

from __future__ import annotations

from troubleshooter.scan.checkers import Checker, Hit


class DestroyProcessGroupMissingChecker(Checker):
    """No destroy_process_group anywhere in the scanned files."""

    id = "destroy-process-group-missing"
    satisfied_by = "destroy_process_group"

    def check(self, m):
        if m.calls_named(m.P.destroy_process_group):
            return
        for site in m.calls_named(m.P.init_process_group)[:1]:
            yield Hit(site.line, "the process group is initialised here but never destroyed: at exit PyTorch warns "
                                 "'destroy_process_group() was not called' and NCCL resources may leak or hang "
                                 "on shutdown", {"variable": "dist.destroy_process_group"})


CHECKER = DestroyProcessGroupMissingChecker()
