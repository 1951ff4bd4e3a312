"""missing-set-device: NCCL process group without torch.cuda.set_device(local_rank) or device_id."""

from __future__ import annotations

import ast

from troubleshooter.scan.checkers import Checker, Hit
from troubleshooter.scan.checkers._common import collective_names, ddp_wraps, local_rank_name
from troubleshooter.scan.model import const


class MissingSetDeviceChecker(Checker):
    """init_process_group on GPUs, no set_device anywhere in the scan, no device_id=."""

    id = "missing-set-device"
    satisfied_by = "set_device"

    def check(self, m):
        if "CUDA_VISIBLE_DEVICES" in m.strings:
            return
        if m.calls_named(m.P.set_device):
            yield from self._cuda_work_before(m)
            return
        for site in m.calls_named(m.P.init_process_group)[:1]:
            backend = const(site.arg(0, "backend"))
            if site.kw("device_id") is not None or backend == "gloo" or (backend != "nccl" and "cuda" not in m.text):
                continue
            if not self._uses_gpu(m):
                continue
            rank = local_rank_name(m) or "local_rank"
            yield Hit(site.line, f"the process group starts without torch.cuda.set_device({rank}): NCCL then uses "
                                 "the current device, GPU 0, on every rank ('Duplicate GPU detected', extra "
                                 "memory and hangs on GPU 0)", {"variable": rank})

    @staticmethod
    def _uses_gpu(m) -> bool:
        """The processes do GPU work after joining the group: CUDA named anywhere, a model or tensor moved with
        ``.to(...)`` / ``torch.device(...)``, a DDP wrap, or a collective, here or in another module of the scan.
        A script that only iterates a DistributedSampler's indices never touches the device set_device chooses."""
        if ("cuda" in m.text or bool(ddp_wraps(m)) or bool(m.methods("to"))
                or bool(m.calls_named(["torch.device"])) or bool(m.calls_named(collective_names(m)))):
            return True
        gpu_work = {*m.P.gpu_work_names, *m.P.collectives}
        return m.project is not None and bool(m.project.referenced & gpu_work)  # in another module of the scan

    @staticmethod
    def _cuda_work_before(m):
        """CUDA work on the default device before the rank's set_device in the same function: ``torch.load``
        without map_location (tensors go back to the GPU they were saved from), ``.cuda()`` / ``.to("cuda")``
        without an index. Every process then also holds memory on GPU 0."""
        by_rank = [s for s in m.calls_named(m.P.set_device) if s.arg(0) is not None and m.mentions_rank(s.arg(0))]
        if not by_rank:
            return
        first = min(by_rank, key=lambda s: s.line)
        if first.ctx.sides or first.ctx.dist_branch:
            return
        for site in m.calls:
            if site.ctx.func is not first.ctx.func or site.line >= first.line or site.ctx.sides:
                continue
            loads = site.name == "torch.load" and site.kw("map_location") is None and len(site.node.args) < 2
            moves = isinstance(site.node.func, ast.Attribute) and (
                (site.method == "cuda" and not site.node.args and not site.node.keywords)
                or (site.method == "to" and const(site.arg(0, "device")) == "cuda"))
            if loads or moves:
                rank = local_rank_name(m) or "local_rank"
                what = "torch.load without map_location" if loads else f".{site.method}() on the default GPU"
                yield Hit(site.line, f"{what} at line {site.line} runs before torch.cuda.set_device({rank}) (line "
                                     f"{first.line}): every process puts those tensors on GPU 0 and holds memory "
                                     "there; set the device first (and load with map_location)",
                          {"variable": rank}, stands_when_satisfied=True)
                return


CHECKER = MissingSetDeviceChecker()
