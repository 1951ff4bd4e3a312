"""missing-set-device: NCCL process group without torch.cuda.set_device(local_rank) or device_id."""

from __future__ import annotations

from troubleshooter.scan.checkers import Checker, Hit
from troubleshooter.scan.checkers._common import local_rank_name
from troubleshooter.scan.model import const


class MissingSetDeviceChecker(Checker):
    """init_process_group on GPUs, no set_device anywhere in the scan, no device_id=."""

    id = "missing-set-device"
    satisfied_by = "set_device"

    def check(self, m):
        if m.calls_named(m.P.set_device) or "CUDA_VISIBLE_DEVICES" in m.strings:
            return
        for site in m.calls_named(m.P.init_process_group)[:1]:
            backend = const(site.arg(0, "backend"))
            if site.kw("device_id") is not None or backend == "gloo" or (backend != "nccl" and "cuda" not in m.text):
                continue
            rank = local_rank_name(m) or "local_rank"
            yield Hit(site.line, f"the process group starts without torch.cuda.set_device({rank}): NCCL then uses "
                                 "the current device, GPU 0, on every rank ('Duplicate GPU detected', extra "
                                 "memory and hangs on GPU 0)", {"variable": rank})


CHECKER = MissingSetDeviceChecker()
