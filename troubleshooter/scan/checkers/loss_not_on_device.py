"""loss-not-on-device: a loss module's weight tensor left on the CPU while the model trains on a GPU."""

from __future__ import annotations

import ast

from troubleshooter.scan.checkers import Checker, Hit
from troubleshooter.scan.checkers._common import chain_moves, is_device_move
from troubleshooter.scan.model import dotted, source


class LossNotOnDeviceChecker(Checker):
    """``nn.CrossEntropyLoss(weight=torch.tensor(...))`` with neither the weight nor the loss moved."""

    id = "loss-not-on-device"

    def check(self, m):
        if "cuda" not in m.text:
            return
        for site in m.calls_named(m.P.loss_modules_with_weight):
            weight = next((site.kw(k) for k in m.P.loss_weight_kwargs if site.kw(k) is not None), None)
            if weight is None or self._moved_result(m, site):
                continue
            crit = site.assigned_to
            if crit and any(s.recv == crit and is_device_move(m, s) for s in m.calls):
                continue
            if not self._cpu_tensor(m, weight, site):
                continue
            name = crit or site.name.rpartition(".")[2]
            yield Hit(site.line, f"{name} = {site.name.rpartition('.')[2]}(weight={source(weight)}) keeps its weight "
                                 f"on the CPU while the model is on the GPU: computing the loss raises 'Expected all "
                                 f"tensors to be on the same device'", {"variable": name})
        yield from self._plain_attribute_weights(m)

    @staticmethod
    def _plain_attribute_weights(m):
        """``self.w = torch.tensor(...)`` in a module (a plain attribute, not a buffer: ``.cuda()`` leaves it on the
        CPU) later passed as ``weight=self.w`` to a loss."""
        kwargs = m.P.loss_weight_kwargs
        for site in m.calls:
            func = site.ctx.func
            if func is None or func.cls is None or not (site.name in m.P.loss_modules_with_weight
                                                       or site.name in m.P.functional_losses_with_weight):
                continue
            weight = next((site.kw(k) for k in kwargs if site.kw(k) is not None), None)
            attr = dotted(weight) if weight is not None else None
            if not attr or not attr.startswith("self."):
                continue
            made = [b for b in m.bindings.get(attr, ()) if b.func is not None and b.func.cls == func.cls]
            if not made or not all(_cpu_factory(m, b.value) for b in made):
                continue
            if any(s.recv == attr and is_device_move(m, s) for s in m.calls):
                continue
            yield Hit(site.line, f"{attr} is a plain tensor attribute built on the CPU (line {made[0].line}), not a "
                                 f"registered buffer: moving the module to the GPU leaves it behind, so "
                                 f"{site.name.rpartition('.')[2]}(weight={attr}) raises 'Expected all tensors to be on "
                                 "the same device'; register it with self.register_buffer", {"variable": attr})

    @staticmethod
    def _moved_result(m, site) -> bool:
        return any(isinstance(s.node.func, ast.Attribute) and s.node.func.value is site.node and is_device_move(m, s)
                   for s in m.calls)

    @staticmethod
    def _cpu_tensor(m, node, site) -> bool:
        text = dotted(node)
        bound = m.binding(text, site.line, site.ctx.func) if text else None
        if bound is not None and isinstance(bound.value, ast.IfExp):  # weights = make(...) if use_weights else None
            arms = [a for a in (bound.value.body, bound.value.orelse)
                    if not (isinstance(a, ast.Constant) and a.value is None)]
            made_all = [m.site_of(a) if isinstance(a, ast.Call) else None for a in arms]
        else:
            made_all = [m.value_call(node, site.line, site.ctx.func)]
        if not made_all or not all(made is not None and (
                made.name in m.P.cpu_tensor_factories and made.kw("device") is None or _cpu_helper(m, made))
                for made in made_all):
            value = bound.value if bound is not None else (None if text else node)
            if value is None or not _cpu_arithmetic(m, value, site, depth=2):
                return False
        if text:
            if any(chain_moves(m, b.value) for b in m.bindings.get(text, ())):
                return False
            if any(s.recv == text and is_device_move(m, s) for s in m.calls):
                return False
        return True


def _cpu_helper(m, made) -> bool:
    """``weights = class_weights(labels)``: a local function that builds a tensor with torch calls and never names a
    device (no ``device``, ``cuda``, ``.to``), given no argument that names one: its result stays on the CPU."""
    infos = m.functions.get(made.method, []) if made.recv is None else []
    if len(infos) != 1 or infos[0].cls is not None:
        return False
    body = ast.unparse(infos[0].node)
    args = " ".join(ast.unparse(a) for a in [*made.node.args, *(k.value for k in made.node.keywords)])
    if any(word in text for word in ("device", "cuda", ".to(") for text in (body, args)):
        return False
    for arg in made.node.args:  # an argument moved to the GPU before the call
        name = dotted(arg)
        if name and (any(chain_moves(m, b.value) for b in m.bindings.get(name, ()) if b.line <= made.line)
                     or any(s.recv == name and s.line <= made.line and is_device_move(m, s) for s in m.calls)):
            return False
    return any(s.ctx.func is infos[0] and s.name.startswith("torch.") for s in m.calls)


def _cpu_arithmetic(m, value: ast.AST, site, depth: int) -> bool:
    """A tensor computed on the CPU from factory calls: arithmetic over them and numbers (``1.0 / torch.tensor(counts)``,
    ``w / w.sum()``), methods that keep the device (``torch.tensor(w).float()``), names bound to such values
    (``depth`` deep). Not when any part is moved (``.cuda()``, ``.to(device)``) or is something else."""
    if isinstance(value, ast.Constant):
        return isinstance(value.value, (int, float))
    if isinstance(value, ast.UnaryOp):
        return _cpu_arithmetic(m, value.operand, site, depth)
    if isinstance(value, ast.BinOp):
        sides = [value.left, value.right]
        return all(_cpu_arithmetic(m, side, site, depth) for side in sides) and not all(
            isinstance(side, ast.Constant) for side in sides)
    if isinstance(value, ast.Name) and depth:
        bound = m.binding(value.id, site.line, site.ctx.func)
        return bound is not None and not any(chain_moves(m, b.value) for b in m.bindings.get(value.id, ())) and \
            not any(s.recv == value.id and is_device_move(m, s) for s in m.calls) and \
            _cpu_arithmetic(m, bound.value, site, depth - 1)
    made = m.site_of(value) if isinstance(value, ast.Call) else None
    if made is None or is_device_move(m, made):
        return False
    if made.name in m.P.cpu_tensor_factories:
        return made.kw("device") is None
    receiver = value.func.value if isinstance(value.func, ast.Attribute) else None
    return receiver is not None and not made.node.args and not made.node.keywords and \
        _cpu_arithmetic(m, receiver, site, depth)


def _cpu_factory(m, value: ast.AST) -> bool:
    """A tensor factory call without ``device=`` (the branches of ``x if c else None`` too), not moved after."""
    if isinstance(value, ast.IfExp):
        arms = [a for a in (value.body, value.orelse) if not (isinstance(a, ast.Constant) and a.value is None)]
        return bool(arms) and all(_cpu_factory(m, a) for a in arms)
    made = m.site_of(value) if isinstance(value, ast.Call) else None
    return made is not None and made.name in m.P.cpu_tensor_factories and made.kw("device") is None


CHECKER = LossNotOnDeviceChecker()
