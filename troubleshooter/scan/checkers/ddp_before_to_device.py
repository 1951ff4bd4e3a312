"""ddp-before-to-device: the model is wrapped in DDP before it is moved to its GPU."""

from __future__ import annotations

import ast

from troubleshooter.scan.checkers import Checker, Hit
from troubleshooter.scan.checkers._common import (
    chain_moves, ddp_wraps, is_device_move, local_callee, moves_of, wrapped_name,
)
from troubleshooter.scan.model import const, dotted, source


class DdpBeforeToDeviceChecker(Checker):
    """DDP(model) followed by model.to()/.cuda() (or the wrapper moved), with no move before the wrap."""

    id = "ddp-before-to-device"

    def check(self, m):
        for wrap, model in self._wraps(m):
            if not model:
                yield from self._fresh_inline(m, wrap)
                continue
            func = wrap.ctx.func
            names = {model, wrap.assigned_to} - {None}
            moves = [s for s in m.calls if s.recv in names and s.ctx.func is func and is_device_move(m, s)]
            if any(s.line < wrap.line and s.recv == model for s in moves):
                continue
            later = [s for s in moves if s.line > wrap.line]
            binding = _converted_from(m, model, m.binding(model, wrap.line, func), func)
            if binding is None and later and model in _parameters(func):
                binding = "parameter"  # moved only after the wrap: the author knows it is not on the GPU yet
            elif binding is None or chain_moves(m, binding.value) or self._opaque(m, binding.value):
                continue
            if later:
                move = later[0]
                yield Hit(wrap.line, f"DDP({model}) wraps {model} while its parameters are still on the CPU; it is "
                                     f"moved only afterwards ({source(move.node)} at line {move.line})",
                          {"model": model, "variable": wrap.assigned_to or model})
            elif binding != "parameter" and wrap.name in m.P.ddp_wrappers and wrap.kw("device_ids") is not None \
                    and const(wrap.kw("device_ids"), default=...) is not None:
                made = m.value_call(binding.value, binding.line + 1, binding.func)
                if not self._fresh(m, made) or any(s.recv == model and is_device_move(m, s) for s in m.calls):
                    continue  # only a module built right here is known to still be on the CPU
                yield Hit(wrap.line, f"DDP({model}, device_ids=...) wraps {model} but {model} is never moved to "
                                     "that GPU: DDP requires the module on device_ids[0] before wrapping",
                          {"model": model, "variable": wrap.assigned_to or model})

    @staticmethod
    def _wraps(m):
        """(call, wrapped model name): DDP(...) calls, and calls of a local function that returns DDP(<param>)."""
        helpers = {}
        for wrap in ddp_wraps(m):
            yield wrap, wrapped_name(wrap)
            func = wrap.ctx.func
            if func is not None and func.cls is None and wrapped_name(wrap) in _parameters(func) and any(
                    isinstance(n, ast.Return) and n.value is wrap.node for n in ast.walk(func.node)):
                helpers[func.name] = (func, _parameters(func).index(wrapped_name(wrap)))
        for site in m.calls:
            if site.method in helpers and local_callee(m, site) is helpers[site.method][0]:
                arg = site.arg(helpers[site.method][1])
                if dotted(arg):
                    yield site, dotted(arg)

    def _fresh_inline(self, m, wrap):
        """``DDP(Net(), device_ids=[rank])``: a module built inside the call, never moved; or ``self.model =
        DDP(Net())`` whose wrapper is moved to the GPU only afterwards (``self.model.to(device)``)."""
        arg = wrap.arg(0, "module")
        made = m.site_of(arg) if isinstance(arg, ast.Call) else None
        if wrap.name not in m.P.ddp_wrappers or not self._fresh(m, made):
            return
        if chain_moves(m, arg) or made.kw("device") is not None:
            return
        text = source(arg)
        later = [s for s in moves_of(m, wrap.assigned_to, wrap.ctx.func) if s.line > wrap.line
                 and const(s.arg(0, "device")) != "cpu"] if wrap.assigned_to else []
        if later:
            yield Hit(wrap.line, f"DDP({text}) wraps a module built on the CPU; the wrapper is moved to the GPU only "
                                 f"afterwards ({source(later[0].node)} at line {later[0].line}): move the module "
                                 "before wrapping it", {"model": text, "variable": wrap.assigned_to})
            return
        if wrap.kw("device_ids") is None:
            return
        yield Hit(wrap.line, f"DDP({text}, device_ids=...) wraps a module built on the CPU and never moved to that "
                             "GPU: DDP requires the module on device_ids[0] before wrapping",
                  {"model": text, "variable": wrap.assigned_to or text})

    @staticmethod
    def _fresh(m, made) -> bool:
        """A module built here (``nn.Linear(...)``, a class of this file), or by a local builder function that only
        constructs one and never moves it (``def get_model(): return nn.Sequential(...)``)."""
        if made is None:
            return False
        if made.name.startswith("torch.nn.") or made.method in m.classes:
            return True
        builder = local_callee(m, made)
        return builder is not None and builder.cls is None and _builds_cpu_module(m, builder)

    @staticmethod
    def _opaque(m, value) -> bool:
        """The model comes from a local helper or factory we cannot see into (it may move it)."""
        site = m.value_call(value, 10**9, None) if value is not None else None
        if site is None:
            return True
        builder = local_callee(m, site)
        if builder is not None and builder.cls is None and _builds_cpu_module(m, builder):
            return False
        if site.name in m.functions or site.method in m.functions:
            return True
        return site.kw("device") is not None or site.kw("device_map") is not None


def _converted_from(m, model: str, binding, func):
    """The binding that built the module, behind conversions of it that keep its device (``model =
    SyncBatchNorm.convert_sync_batchnorm(model)``, ``model = torch.compile(model)``: calls handed the module
    itself): the module they convert was built, and maybe moved, earlier. Unchanged when no earlier binding
    builds it here."""
    found = binding
    for _ in range(4):
        if found is None or not (isinstance(found.value, ast.Call) and any(
                dotted(a) == model for a in [*found.value.args, *(k.value for k in found.value.keywords)])):
            break
        found = m.binding(model, found.line, func)
    return found if found is not None else binding


def _builds_cpu_module(m, builder) -> bool:
    """Every ``return`` of a local function hands back a module it constructs (``torch.nn.*`` or a class of this file,
    directly or through a name), and nothing in it moves a module or names a device."""
    calls = m.sites_in(builder.node)
    if any(is_device_move(m, s) or s.kw("device") is not None or s.kw("device_map") is not None for s in calls):
        return False
    returns = [n.value for n in ast.walk(builder.node) if isinstance(n, ast.Return) and n.value is not None]

    def built(value) -> bool:
        if dotted(value):
            bound = [b for b in m.bindings.get(dotted(value), ()) if b.func is builder]
            value = max(bound, key=lambda b: b.line).value if bound else None
        made = m.site_of(value) if isinstance(value, ast.Call) else None
        return made is not None and (made.name.startswith("torch.nn.") or made.method in m.classes)

    return bool(returns) and all(built(v) for v in returns)


def _parameters(func) -> list[str]:
    if func is None or func.name == "<class>":
        return []
    names = [a.arg for a in func.node.args.args]
    return names[1:] if names and names[0] in ("self", "cls") else names


CHECKER = DdpBeforeToDeviceChecker()
