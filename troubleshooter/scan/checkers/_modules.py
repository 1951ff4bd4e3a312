"""What a DDP-wrapped ``nn.Module`` class defined in the file does with its parameters.

Used by unused-parameters-error, unnecessary-find-unused-parameters and unsynced-dropout-rng:
which submodules own parameters, which the forward pass (and the methods it calls) always
uses, which it uses only under a branch that depends on the input or on a random draw.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from troubleshooter.scan.callargs import TERMINAL
from troubleshooter.scan.checkers._common import ddp_wraps, function_arguments, wrapped_name
from troubleshooter.scan.model import CallSite, ModuleIndex, const, dotted, walk

ALWAYS, INPUT, RANDOM, CONFIG = "always", "input", "random", "config"
_PARAMETER_TENSORS = {"torch.nn.Parameter", "torch.nn.parameter.Parameter"}


@dataclass
class ModelClass:
    """Parameter use of one nn.Module subclass."""

    name: str
    node: ast.ClassDef
    params: dict[str, int] = field(default_factory=dict)  # self.<attr> with parameters -> line
    unknown: set[str] = field(default_factory=set)  # attrs built by calls we cannot see into
    conditional_init: set[str] = field(default_factory=set)
    uses: dict[str, str] = field(default_factory=dict)  # attr -> ALWAYS | INPUT | RANDOM | CONFIG
    use_lines: dict[str, int] = field(default_factory=dict)
    random_branches: list[tuple[int, str]] = field(default_factory=list)
    flag_uses: dict[str, str] = field(default_factory=dict)  # attr used only under ``if self.<flag>:`` -> flag
    dynamic: bool = False  # getattr(self, ...), self.children(): attribute use is not visible
    tensors: set[str] = field(default_factory=set)  # self.<attr> = nn.Parameter(...): indexing it gathers rows
    outer: set[str] = field(default_factory=set)  # while collecting one arm of a branch: attrs used before it


def wrapped_classes(m: ModuleIndex) -> list[tuple[CallSite, ModelClass]]:
    """(DDP wrap call, analysed class) for every wrap whose model is an instance of a class in this file."""
    out = []
    for wrap in ddp_wraps(m):
        arg = wrap.arg(0, "module")
        node = arg
        name = wrapped_name(wrap)
        binding = None
        if name:
            binding = m.binding(name, wrap.line, wrap.ctx.func)
            node = binding.value if binding else None
        at = (binding.line, binding.func) if name and binding else (wrap.line, wrap.ctx.func)
        cls = _class_of(m, node, at) or (_class_passed_in(m, wrap, name) if name and node is None else None) or (
            _attribute_class(m, wrap, name) if name and node is None else None)
        if cls is not None:
            out.append((wrap, analyse(m, cls)))
    return out


def _class_passed_in(m: ModuleIndex, wrap: CallSite, name: str) -> ast.ClassDef | None:
    """The class of the model a wrapping helper receives as its parameter ``name`` (``def wrap_ddp(model): return
    DDP(model, ...)`` called as ``wrap_ddp(Net().cuda())``), when every call of the helper passes one of this file."""
    func = wrap.ctx.func
    if func is None or name not in {a.arg for a in func.node.args.args}:
        return None
    found = None
    for site in m.calls:
        callee, bound = function_arguments(m, site)
        if callee is not func:
            continue
        arg = next((a for a, param in bound if param == name), None)
        text = dotted(arg) if arg is not None else None
        binding = m.binding(text, site.line, site.ctx.func) if text else None
        cls = _class_of(m, binding.value if binding else arg)
        if cls is None or (found is not None and cls is not found):
            return None
        found = cls
    return found


def _attribute_class(m: ModuleIndex, wrap: CallSite, name: str) -> ast.ClassDef | None:
    """The class of ``self.model`` wrapped in one method (``self.model = DDP(self.model, ...)`` in ``_setup_train``)
    when the other methods of that class bind it (``self.model = DetectionModel().to(device)`` in ``__init__``) to
    instances of one class of this file."""
    func = wrap.ctx.func
    if not name.startswith("self.") or func is None or func.cls is None:
        return None
    found = None
    for binding in m.bindings.get(name, ()):
        if binding.func is None or binding.func.cls != func.cls or binding.value is wrap.node:
            continue
        cls = _class_of(m, binding.value, (binding.line, binding.func))
        if cls is None or (found is not None and cls is not found):
            return None
        found = cls
    return found


def prepared_classes(m: ModuleIndex) -> list[tuple[CallSite, ModelClass]]:
    """(prepare call, analysed class) for a model of a class in this file that a framework call wraps in DDP
    (``model, opt, loader = accelerator.prepare(model, opt, loader)``: ``ddp_returning_preparers``)."""
    out = []
    for site in m.calls:
        if site.method not in m.P.ddp_returning_preparers or site.recv is None:
            continue
        for arg in site.node.args:
            name = dotted(arg)
            binding = m.binding(name, site.line, site.ctx.func) if name else None
            cls = _class_of(m, binding.value if binding else arg)
            if cls is not None:
                out.append((site, analyse(m, cls)))
    return out


def _class_of(m: ModuleIndex, node: ast.AST | None, at: tuple | None = None, depth: int = 2) -> ast.ClassDef | None:
    """The class of this file whose instance ``node`` builds: ``Net(...)``, through device moves and SyncBatchNorm
    conversion; with ``at`` (line, function) also ``net.cuda()`` after ``net = Net()`` and a local factory whose every
    return builds one class (``def build_model(): return Net()``)."""
    while isinstance(node, ast.Call):
        target = node.func
        if isinstance(target, ast.Name) and target.id in m.classes:
            return m.classes[target.id]
        if isinstance(target, ast.Name) and at is not None and depth:
            return _built_by(m, target.id, depth - 1)
        if m.qual(target) in m.P.sync_batchnorm and node.args:  # ``SyncBatchNorm.convert_sync_batchnorm(Net())``
            node = node.args[0]
            continue
        node = target.value if isinstance(target, ast.Attribute) else None
    if isinstance(node, ast.Name) and at is not None and depth:
        binding = m.binding(node.id, at[0], at[1])
        if binding is not None:
            return _class_of(m, binding.value, (binding.line, binding.func), depth - 1)
    return None


def _built_by(m: ModuleIndex, name: str, depth: int) -> ast.ClassDef | None:
    """The one class of this file that every return of the local function ``name`` builds."""
    infos = m.functions.get(name)
    if not infos or len(infos) != 1 or infos[0].cls is not None or infos[0].name == "<class>":
        return None
    info = infos[0]
    returns = [n for n in m.nodes_in(info.node) if isinstance(n, ast.Return)]
    found = {id(c): c for r in returns if (c := _class_of(m, r.value, (r.lineno, info), depth)) is not None}
    return next(iter(found.values())) if returns and len(found) == 1 and all(
        _class_of(m, r.value, (r.lineno, info), depth) is not None for r in returns) else None


def _is_module_class(m: ModuleIndex, cls: ast.ClassDef) -> bool:
    return any(m.qual(b) in ("torch.nn.Module", "torch.nn.modules.module.Module") for b in cls.bases)


def analyse(m: ModuleIndex, cls: ast.ClassDef) -> ModelClass:
    """Collect the parameter-owning attributes and how the forward pass uses them."""
    info = ModelClass(cls.name, cls)
    methods = {f.name: f for f in cls.body if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))}
    if not _is_module_class(m, cls) or "forward" not in methods or "__init__" not in methods:
        info.dynamic = True
        return info
    _collect_params(m, info, methods["__init__"].body, conditional=False)
    reachable, todo = set(), ["forward"]
    while todo:
        name = todo.pop()
        if name in reachable or name not in methods:
            continue
        reachable.add(name)
        for node in walk(methods[name]):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and dotted(node.func.value) == "self":
                todo.append(node.func.attr)
    forward = methods["forward"]
    inputs = _derived_from({a.arg for a in [*forward.args.args, *forward.args.kwonlyargs]} - {"self"}, forward)
    for name in reachable:
        _collect_uses(m, info, methods[name].body, ALWAYS, inputs)
    for node in walk(cls):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "getattr") or (
                isinstance(node, ast.Attribute) and node.attr in m.P.dynamic_submodule_access
                and dotted(node.value) == "self"):
            info.dynamic = True
    return info


def _derived_from(inputs: set[str], forward: ast.AST) -> set[str]:
    """The forward's inputs and the local names computed from them (``h = self.stage1(x)``, ``early = self.exit(h)``):
    a test on any of them (``if early.max() > 0.9: return early``) depends on the batch."""
    names = set(inputs)
    assigns = [n for n in ast.walk(forward) if isinstance(n, (ast.Assign, ast.AugAssign, ast.AnnAssign))
               and n.value is not None]
    for _ in range(4):
        before = len(names)
        for node in assigns:
            if any(isinstance(n, ast.Name) and n.id in names for n in ast.walk(node.value)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                names |= {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
        if len(names) == before:
            break
    return names


def _collect_params(m: ModuleIndex, info: ModelClass, body: list[ast.stmt], conditional: bool) -> None:
    for stmt in body:
        if isinstance(stmt, ast.If):
            _collect_params(m, info, stmt.body, True)
            _collect_params(m, info, stmt.orelse, True)
            continue
        if isinstance(stmt, (ast.For, ast.While, ast.With, ast.Try)):
            _collect_params(m, info, getattr(stmt, "body", []), True)
            continue
        if not isinstance(stmt, ast.Assign) or len(stmt.targets) != 1:
            continue
        target = stmt.targets[0]
        if not (isinstance(target, ast.Attribute) and dotted(target.value) == "self"):
            continue
        attr, calls = target.attr, [n for n in walk(stmt.value) if isinstance(n, ast.Call)]
        if not calls:
            continue
        names = {m.qual(c.func) for c in calls}
        if names & m.P.parametric_layers or any(n in m.classes for n in names) or any(
                _layer_factory(m, info, c) for c in calls):
            info.params[attr] = stmt.lineno
        if m.qual(stmt.value.func if isinstance(stmt.value, ast.Call) else stmt.value) in _PARAMETER_TENSORS:
            info.tensors.add(attr)
        elif not all(n.startswith("torch.nn.") for n in names):
            info.unknown.add(attr)
        if conditional:
            info.conditional_init.add(attr)


def _layer_factory(m: ModuleIndex, info: ModelClass, call: ast.Call, depth: int = 2) -> bool:
    """``call`` runs a local function (``conv_block(64, 64)``) or a method of the class (``self._make_layer(...)``)
    whose body builds a layer with parameters (a parametric torch layer or a module class of this file), directly or
    through one more such factory."""
    func = call.func
    if isinstance(func, ast.Name):
        infos = [f for f in m.functions.get(func.id, ()) if f.cls is None]
    elif isinstance(func, ast.Attribute) and dotted(func.value) == "self":
        infos = [f for f in m.functions.get(func.attr, ()) if f.cls == info.name]
    else:
        return False
    if len(infos) != 1:
        return False
    inner = [n for n in m.nodes_in(infos[0].node) if isinstance(n, ast.Call)]
    return any(m.qual(c.func) in m.P.parametric_layers or m.qual(c.func) in m.classes for c in inner) or (
        depth > 1 and any(_layer_factory(m, info, c, depth - 1) for c in inner if c.func is not func))


def _kind(m: ModuleIndex, test: ast.AST, inputs: set[str]) -> str:
    """What a branch condition depends on."""
    for node in walk(test):
        if isinstance(node, ast.Call) and m.qual(node.func) in m.P.random_draws:
            return RANDOM
    if dotted(test) == "self.training":
        return ALWAYS
    if any(isinstance(n, ast.Name) and n.id in inputs for n in walk(test)):
        return INPUT
    return CONFIG


_RANK = {ALWAYS: 0, CONFIG: 1, INPUT: 2, RANDOM: 3}


def _collect_uses(m: ModuleIndex, info: ModelClass, body: list[ast.stmt], kind: str, inputs: set[str]) -> None:
    for index, stmt in enumerate(body):
        if isinstance(stmt, ast.If):
            branch = _kind(m, stmt.test, inputs)
            if branch == RANDOM:
                info.random_branches.append((stmt.lineno, ast.unparse(stmt.test)))
            inner = max(kind, branch, key=_RANK.get)
            _note(m, info, stmt.test, kind)
            # everything after an early return (or a loop's continue / break) is the other arm
            exits = bool(stmt.body) and isinstance(stmt.body[-1], TERMINAL) and not stmt.orelse
            first = _arm(m, info, stmt.body, inner, inputs)
            flag = _switch_of(stmt.test)
            if kind == ALWAYS and branch == CONFIG and flag and flag.startswith("self.") and flag.count(".") == 1:
                for attr in set(first.uses) - set(info.uses) - info.outer:
                    info.flag_uses[attr] = flag[5:]
            second = _arm(m, info, body[index + 1:] if exits else stmt.orelse, inner, inputs)
            _merge_arms(info, first, second, kind, inner)
            if exits:
                return
            continue
        if isinstance(stmt, (ast.For, ast.While, ast.With, ast.Try)):
            items = _loop_items_kind(m, stmt, kind, inputs) if isinstance(stmt, ast.For) else kind
            for expr in ast.iter_child_nodes(stmt):
                if isinstance(expr, ast.expr):
                    _note(m, info, expr, items if expr is getattr(stmt, "iter", None) else kind)
            for part in ("body", "orelse", "finalbody"):
                _collect_uses(m, info, getattr(stmt, part, []) or [], kind, inputs)
            for handler in getattr(stmt, "handlers", []):
                _collect_uses(m, info, handler.body, kind, inputs)
            continue
        _note(m, info, stmt, kind)


def _switch_of(test: ast.AST) -> str | None:
    """``self.<flag>`` when ``test`` holds exactly when that attribute is truthy: ``if self.use_aux:``, ``if
    self.aux_weight > 0:``, ``if self.aux_weight != 0:``, ``if self.aux_head is not None:``."""
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.comparators[0], ast.Constant):
        limit, op = test.comparators[0].value, test.ops[0]
        if (isinstance(op, (ast.Gt, ast.NotEq)) and limit in (0, False) and limit is not None) or (
                isinstance(op, ast.IsNot) and limit is None):
            test = test.left
        else:
            return None
    return dotted(test)


def _arm(m: ModuleIndex, info: ModelClass, body: list[ast.stmt], kind: str, inputs: set[str]) -> ModelClass:
    """The uses one arm of a branch makes, collected apart."""
    scratch = ModelClass(info.name, info.node, params=info.params, tensors=info.tensors,
                         outer=info.outer | set(info.uses))
    _collect_uses(m, scratch, body, kind, inputs)
    return scratch


def _merge_arms(info: ModelClass, first: ModelClass, second: ModelClass, kind: str, inner: str) -> None:
    """Fold both arms of a branch into ``info``: a layer each arm uses at the branch's own level runs whichever way
    the test goes (``if h.max() > 0: return self.a(h) + self.b(h)`` / ``return self.b(h) - self.a(h)``)."""
    for arm in (first, second):
        info.random_branches += arm.random_branches
        for attr, flag in arm.flag_uses.items():
            info.flag_uses.setdefault(attr, flag)
    for attr in first.uses.keys() | second.uses.keys():
        if first.uses.get(attr) == inner and second.uses.get(attr) == inner:
            found, line = kind, min(first.use_lines[attr], second.use_lines[attr])
        else:
            arm = min((a for a in (first, second) if attr in a.uses), key=lambda a: _RANK[a.uses[attr]])
            found, line = arm.uses[attr], arm.use_lines[attr]
        old = info.uses.get(attr)
        if old is None or _RANK[found] < _RANK[old]:
            info.uses[attr] = found
            info.use_lines[attr] = line


def _loop_items_kind(m: ModuleIndex, loop: ast.For, kind: str, inputs: set[str]) -> str:
    """How a loop uses the items it iterates: ``for layer in self.layers: if random.random() < p: continue`` (an
    exit before the loop variable is first used) uses them only under that test."""
    targets = {n.id for n in ast.walk(loop.target) if isinstance(n, ast.Name)}
    for stmt in loop.body:
        if any(isinstance(n, ast.Name) and n.id in targets for n in ast.walk(stmt)):
            break
        if isinstance(stmt, ast.If) and stmt.body and isinstance(stmt.body[-1], TERMINAL) and not stmt.orelse:
            kind = max(kind, _kind(m, stmt.test, inputs), key=_RANK.get)
    return kind


def _note(m: ModuleIndex, info: ModelClass, node: ast.AST, kind: str) -> None:
    # ``self.heads[task](x)``: which entry runs depends on the data, so the container is used only sometimes
    picked = {id(sub.value) for sub in walk(node)
              if isinstance(sub, ast.Subscript) and not isinstance(sub.slice, ast.Constant)}
    # ``random.randrange(len(self.candidates))`` draws an index over the entries: it runs none of them
    drawn_by = tuple(m.P.random_draw_prefixes)
    counted = {id(call.args[0]) for draw in walk(node) if isinstance(draw, ast.Call)
               and (dotted(draw.func) or "").startswith(drawn_by)
               for call in walk(draw) if isinstance(call, ast.Call) and dotted(call.func) == "len"
               and len(call.args) == 1}
    for sub in walk(node):
        if isinstance(sub, ast.IfExp) or id(sub) in counted:
            continue
        if id(sub) in picked and isinstance(sub, ast.Attribute) and dotted(sub.value) == "self" \
                and sub.attr not in info.tensors:  # ``self.table[idx]`` gathers rows of one tensor: all of it is used
            if _RANK[INPUT] >= _RANK[kind] and sub.attr not in info.uses:
                info.uses[sub.attr] = INPUT
                info.use_lines[sub.attr] = sub.lineno
            continue
        if isinstance(sub, ast.Attribute) and isinstance(sub.value, ast.Name) and sub.value.id == "self":
            old = info.uses.get(sub.attr)
            if old is None or _RANK[kind] < _RANK[old]:
                info.uses[sub.attr] = kind
                info.use_lines[sub.attr] = sub.lineno


def flag_off(m: ModuleIndex, wrap: CallSite, cls: ModelClass, flag: str) -> bool:
    """``self.<flag> = <param>`` in ``__init__`` with a false default that the construction of the wrapped model
    does not override: a branch on it never runs."""
    init = next((f for f in cls.node.body if isinstance(f, ast.FunctionDef) and f.name == "__init__"), None)
    if init is None:
        return False
    params = [a.arg for a in init.args.args][1:]
    defaults = dict(zip(params[len(params) - len(init.args.defaults):], init.args.defaults))
    source_param = next((dotted(s.value) for s in walk(init) if isinstance(s, ast.Assign) and len(s.targets) == 1
                         and dotted(s.targets[0]) == f"self.{flag}"), None)
    if source_param not in defaults or const(defaults[source_param], default=True) not in (False, None, 0):
        return False
    built = _construction(m, wrap)
    if built is None:
        return False
    position = params.index(source_param)
    passed = len(built.args) > position or any(k.arg in (source_param, None) for k in built.keywords)
    return not passed


def _construction(m: ModuleIndex, wrap: CallSite) -> ast.Call | None:
    """The ``Model(...)`` call that built the wrapped module."""
    node = wrap.arg(0, "module")
    name = wrapped_name(wrap)
    if name:
        binding = m.binding(name, wrap.line, wrap.ctx.func)
        node = binding.value if binding else None
    while isinstance(node, ast.Call):
        if isinstance(node.func, ast.Name) and node.func.id in m.classes:
            return node
        node = node.func.value if isinstance(node.func, ast.Attribute) else None
    return None
