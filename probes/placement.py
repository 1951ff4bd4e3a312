"""Placement probe: after ``.to(device)``, is every parameter and buffer, the input and the loss on the rank's device?

It builds the model with the user's hooks (or the built-in model), moves it the way a training
script does, lists every tensor left elsewhere by module path, wraps it in DDP when every rank is
clean (the wrap is a collective: all ranks decide together), runs one forward to see where the loss
lands, and lists BatchNorm layers that were not converted to SyncBatchNorm.
"""

from __future__ import annotations

from typing import Any

from troubleshooter.core.facts import FactSpec
from troubleshooter.core.probe import WORLD, Probe, ProbeContext, ProbeResult


def same_device(a: Any, b: Any) -> bool:
    """True when two torch devices are the same (``cuda`` without index means the current GPU)."""
    import torch

    def norm(d: Any) -> tuple[str, int | None]:
        d = torch.device(d)
        if d.type == "cuda" and d.index is None:
            return "cuda", torch.cuda.current_device()
        return d.type, d.index
    return norm(a) == norm(b)


def misplaced(model: Any, expected: Any) -> list[dict[str, str]]:
    """Every parameter and buffer not on ``expected``: {module, tensor, kind, device, expected}, by module path."""
    found = []
    for path, module in model.named_modules():
        tensors = [("parameter", n, t) for n, t in module.named_parameters(recurse=False)]
        tensors += [("buffer", n, t) for n, t in module.named_buffers(recurse=False)]
        for kind, name, tensor in tensors:
            if tensor is not None and not same_device(tensor.device, expected):
                found.append({"module": path or "(root)", "tensor": name, "kind": kind,
                              "device": str(tensor.device), "expected": str(expected)})
    return found


def unsynced_batchnorm(model: Any) -> list[str]:
    """Module paths of BatchNorm layers that are not SyncBatchNorm."""
    from torch import nn

    return [path or "(root)" for path, m in model.named_modules()
            if isinstance(m, nn.modules.batchnorm._BatchNorm) and not isinstance(m, nn.SyncBatchNorm)]


def tensor_devices(value: Any) -> list[str]:
    """Devices of the tensors inside ``value`` (tuples, lists, dicts)."""
    import torch

    if isinstance(value, torch.Tensor):
        return [str(value.device)]
    if isinstance(value, (list, tuple)):
        return [d for v in value for d in tensor_devices(v)]
    if isinstance(value, dict):
        return [d for v in value.values() for d in tensor_devices(v)]
    return []


class PlacementProbe(Probe):
    """Lists tensors, inputs and losses off the rank's device, checks the DDP wrap and SyncBatchNorm."""

    id = "placement"
    title = "Device placement of model, inputs and loss"
    scope = WORLD
    needs = ("torch", "process_group")
    timeout_s = 60.0
    order = 220
    produces = (
        FactSpec("placement.model_source", "str", "user (--model) or builtin"),
        FactSpec("placement.expected_device", "str", "The rank's device"),
        FactSpec("placement.factory_devices", "list", "Devices of the tensors as the factory returned the model"),
        FactSpec("placement.move_error", "str", "The error of model.to(device), when it raised"),
        FactSpec("placement.mismatches", "list", "Tensors not on the rank's device after .to(device): "
                 "{module, tensor, kind, device, expected}"),
        FactSpec("placement.mismatch_modules", "list", "Module paths holding a misplaced tensor"),
        FactSpec("placement.ddp_ok", "bool", "DDP wrapped the moved model"),
        FactSpec("placement.ddp_error", "str", "Why DDP did not wrap the model (or was not tried)"),
        FactSpec("placement.input_devices", "list", "Devices of the input tensors given to forward"),
        FactSpec("placement.loss_device", "str", "Device of the loss"),
        FactSpec("placement.forward_error", "str", "The error of the forward pass, when it raised"),
        FactSpec("placement.batchnorm_layers", "list", "BatchNorm layers not converted to SyncBatchNorm"),
    )

    def run(self, ctx: ProbeContext) -> ProbeResult:
        """Build, move, inspect, wrap, forward."""
        import torch
        import torch.distributed as dist
        from torch.nn.parallel import DistributedDataParallel as DDP

        from troubleshooter.run import user_code
        from troubleshooter.run.in_rank import all_gather_json

        if not dist.is_initialized():
            return self.skip("no process group")
        device = torch.device(ctx.device or "cpu")
        facts: dict[str, Any] = {"placement.expected_device": str(device)}
        ctx.phase("build-model")
        loaded = user_code.load_model(ctx.options)
        model = loaded.module
        facts["placement.model_source"] = loaded.source
        facts["placement.factory_devices"] = sorted({str(t.device) for t in [*model.parameters(), *model.buffers()]})
        facts["placement.batchnorm_layers"] = unsynced_batchnorm(model)

        ctx.phase("to-device")
        try:
            model = model.to(device)
        except Exception as exc:  # e.g. a parameter left on the meta device: the tensor list says which
            facts["placement.move_error"] = f"{type(exc).__name__}: {exc}".splitlines()[0][:300]
        mismatches = misplaced(model, device)
        facts["placement.mismatches"] = mismatches
        facts["placement.mismatch_modules"] = sorted({m["module"] for m in mismatches})

        ctx.phase("agree")
        clean = all_gather_json(not mismatches)
        target = model
        if all(clean):
            ctx.phase("ddp-wrap")
            try:
                target = DDP(model, device_ids=[device.index] if device.type == "cuda" else None)
                facts["placement.ddp_ok"] = True
            except Exception as exc:
                facts.update({"placement.ddp_ok": False, "placement.ddp_error": f"{type(exc).__name__}: {exc}"[:300]})
        else:
            bad = [r for r, ok in enumerate(clean) if not ok]
            facts.update({"placement.ddp_ok": False,
                          "placement.ddp_error": f"not tried: ranks {bad} have tensors off their device"})

        ctx.phase("forward")
        try:
            batch = user_code.make_batch(model, ctx.options, device)
            facts["placement.input_devices"] = sorted(set(tensor_devices((batch.args, batch.kwargs))))
            module = target.module if isinstance(target, DDP) else target
            with torch.no_grad():  # a DDP forward without backward would leave a pending reduction
                loss = user_code.loss_of(module(*batch.args, **batch.kwargs))
            facts["placement.loss_device"] = str(loss.device)
        except Exception as exc:
            facts["placement.forward_error"] = f"{type(exc).__name__}: {exc}".splitlines()[0][:300]
        where = ", ".join(f"{m['module']}.{m['tensor']} on {m['device']}" for m in mismatches[:5])
        message = (f"{len(mismatches)} tensor(s) off {device}: {where}" if mismatches else f"all tensors on {device}")
        return self.result(facts, message=message, mismatches=mismatches)
