"""ddp-before-to-device: the model is wrapped in DDP before it is moved to its GPU."""

from __future__ import annotations

from troubleshooter.scan.checkers import Checker, Hit
from troubleshooter.scan.checkers._common import chain_moves, ddp_wraps, is_device_move, wrapped_name
from troubleshooter.scan.model import const, source


class DdpBeforeToDeviceChecker(Checker):
    """DDP(model) followed by model.to()/.cuda() (or the wrapper moved), with no move before the wrap."""

    id = "ddp-before-to-device"

    def check(self, m):
        for wrap in ddp_wraps(m):
            model = wrapped_name(wrap)
            if not model:
                continue
            func = wrap.ctx.func
            names = {model, wrap.assigned_to} - {None}
            moves = [s for s in m.calls if s.recv in names and s.ctx.func is func and is_device_move(m, s)]
            if any(s.line < wrap.line and s.recv == model for s in moves):
                continue
            binding = m.binding(model, wrap.line, func)
            if binding is None or chain_moves(m, binding.value) or self._opaque(m, binding.value):
                continue
            later = [s for s in moves if s.line > wrap.line]
            if later:
                move = later[0]
                yield Hit(wrap.line, f"DDP({model}) wraps {model} while its parameters are still on the CPU; it is "
                                     f"moved only afterwards ({source(move.node)} at line {move.line})",
                          {"model": model, "variable": wrap.assigned_to or model})
            elif wrap.kw("device_ids") is not None and const(wrap.kw("device_ids"), default=...) is not None:
                made = m.value_call(binding.value, binding.line + 1, binding.func)
                fresh = made is not None and (made.name.startswith("torch.nn.") or made.method in m.classes)
                if not fresh or any(s.recv == model and is_device_move(m, s) for s in m.calls):
                    continue  # only a module built right here is known to still be on the CPU
                yield Hit(wrap.line, f"DDP({model}, device_ids=...) wraps {model} but {model} is never moved to "
                                     "that GPU: DDP requires the module on device_ids[0] before wrapping",
                          {"model": model, "variable": wrap.assigned_to or model})

    @staticmethod
    def _opaque(m, value) -> bool:
        """The model comes from a local helper or factory we cannot see into (it may move it)."""
        site = m.value_call(value, 10**9, None) if value is not None else None
        if site is None:
            return True
        if site.name in m.functions or site.method in m.functions:
            return True
        return site.kw("device") is not None or site.kw("device_map") is not None


CHECKER = DdpBeforeToDeviceChecker()
