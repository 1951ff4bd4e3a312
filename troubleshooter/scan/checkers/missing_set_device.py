"""missing-set-device: NCCL process group without torch.cuda.set_device(local_rank) or device_id."""

from __future__ import annotations

import ast

from troubleshooter.scan.checkers import Checker, Hit
from troubleshooter.scan.checkers._common import (
    bare_cuda_placements, collective_names, contains, ddp_wraps, launcher_absent_when, local_callee, local_rank_name,
    resolved_const,
)
from troubleshooter.scan.model import const, dotted


class MissingSetDeviceChecker(Checker):
    """init_process_group on GPUs, no set_device anywhere in the scan, no device_id=.

    The bare ``"cuda"`` device (``.to("cuda")``, ``torch.device("cuda")``, ``.cuda()``) is GPU 0 of every process
    exactly when this set-up is missing, so placements on it are evidence of this one defect (named in the
    message), not a second finding."""

    id = "missing-set-device"
    satisfied_by = "set_device"

    def check(self, m):
        if "CUDA_VISIBLE_DEVICES" in m.strings:
            return
        if m.calls_named(m.P.set_device):
            yield from self._cuda_work_before(m)
            return
        if _device_from_library(m):
            return
        for site in m.calls_named(m.P.init_process_group)[:1]:
            backend = resolved_const(m, site.arg(0, "backend"), site)
            if site.kw("device_id") is not None or backend == "gloo" or (backend != "nccl" and "cuda" not in m.text):
                continue
            if not self._uses_gpu(m):
                continue
            rank = local_rank_name(m) or "local_rank"
            bare = next(bare_cuda_placements(m), None)
            placed = (f"; {ast.unparse(bare.node)} at line {bare.line} therefore also lands on GPU 0"
                      if bare is not None else "")
            yield Hit(site.line, f"the process group starts without torch.cuda.set_device({rank}): NCCL then uses "
                                 "the current device, GPU 0, on every rank ('Duplicate GPU detected', extra "
                                 f"memory and hangs on GPU 0){placed}", {"variable": rank})

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
            if site.ctx.func is not first.ctx.func or site.line >= first.line or site.ctx.sides \
                    or _in_launcher_absent_arm(m, site):
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


def _in_launcher_absent_arm(m, site) -> bool:
    """The call sits in the arm that runs only when no launcher set the rank (``elif 'RANK' not in os.environ:
    ... return``): one process, whose GPU 0 is its own."""
    return any(contains(stmt, site.node) for arm in _launcher_absent_arms(m, site.ctx.func) for stmt in arm)


def _launcher_absent_arms(m, func) -> list[list[ast.stmt]]:
    """The arms of the ``if`` statements of ``func`` (None: the module) that run only when no launcher set the rank,
    in walk order; found once per function (asked for every call before the rank's set_device)."""
    table = m.memo.setdefault("launcher_absent_arms", {})
    key = id(func)
    if key not in table:
        arms = table[key] = []
        for branch in m.nodes_in(func.node if func is not None else m.tree):
            if isinstance(branch, ast.If):
                absent = launcher_absent_when(m, branch.test)
                if absent is None:  # ``alone = 'RANK' not in os.environ`` then ``if alone:``: the test the flag holds
                    held = m.flag_test(branch.test, branch.lineno, func)
                    absent = launcher_absent_when(m, held) if held is not None else None
                if absent is not None:
                    arms.append(branch.body if absent else branch.orelse)
    return table[key]


def _device_from_library(m) -> bool:
    """Some call sets the device through another API (``get_accelerator().set_device(i)``), or a device name is
    bound to what a library function returns (``self._device = utils.get_device(device=cfg.device)``): that
    library may bind the process to its GPU itself (a method of the script's own objects is not a library)."""
    if any(s.method in m.P.device_binding_methods for s in m.calls):
        return True
    for target, bindings in m.bindings.items():
        if "device" not in target.rpartition(".")[2].lower():
            continue
        for b in bindings:
            made = m.site_of(b.value) if isinstance(b.value, ast.Call) else None
            if made is not None and not made.name.startswith("torch.") and local_callee(m, made) is None \
                    and made.method not in m.classes and _imported(m, made.node.func):
                return True
    return False


def _imported(m, func: ast.AST) -> bool:
    """The callee is reached through an import (``utils.get_device``, ``from lib import get_device``), not a
    method of the script's own objects (``self.config.get("device", "cuda")`` reads a setting)."""
    return (dotted(func) or "").partition(".")[0] in m.aliases


CHECKER = MissingSetDeviceChecker()
