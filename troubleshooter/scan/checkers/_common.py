"""Small queries several checkers share (DDP wraps, device moves, loaders, the local-rank name)."""

from __future__ import annotations

import ast

from troubleshooter.scan.model import RANK0, CallSite, FuncInfo, ModuleIndex, const, dotted, last, walk


def ddp_wraps(m: ModuleIndex) -> list[CallSite]:
    """Every ``DistributedDataParallel(...)`` call."""
    return m.calls_named(m.P.ddp_wrappers)


def wrapped_name(site: CallSite) -> str | None:
    """The dotted name of the module a wrapper call wraps (``model`` in ``DDP(model)``)."""
    return dotted(site.arg(0, "module"))


def wrapper_names(m: ModuleIndex) -> dict[str, CallSite]:
    """Dotted names bound to a DDP wrapper -> the wrap call (``model = DDP(model)`` binds ``model``)."""
    return {site.assigned_to: site for site in ddp_wraps(m) if site.assigned_to}


def is_device_move(m: ModuleIndex, site: CallSite) -> bool:
    """``x.cuda()``, ``x.to(device)`` — but not ``x.to(torch.float16)`` or ``x.to(dtype=...)``."""
    if site.method == "cuda" and isinstance(site.node.func, ast.Attribute):
        return True
    if site.method != "to" or not isinstance(site.node.func, ast.Attribute):
        return False
    first = site.arg(0, "device")
    if first is None:
        return False
    return m.qual(first) not in m.P.dtype_names


def chain_moves(m: ModuleIndex, node: ast.AST | None) -> bool:
    """True when an expression like ``Net().to(device)`` or ``build().cuda()`` moves its result."""
    while isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        site = m.site_of(node)
        if site is not None and is_device_move(m, site):
            return True
        node = node.func.value
    return False


def split_by_rank(m: ModuleIndex, node: ast.AST | None) -> bool:
    """The value depends on the rank for its content, not only for its device: ``parts[rank]`` and
    ``parts[rank].to(rank)`` do, ``data.to(rank)`` / ``data.cuda(local_rank)`` (the same data on every rank's GPU)
    does not."""
    while isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        site = m.site_of(node)
        if site is None or not is_device_move(m, site):
            break
        node = node.func.value
    return node is not None and m.mentions_rank(node)


def moves_of(m: ModuleIndex, name: str, func: FuncInfo | None) -> list[CallSite]:
    """Device moves ``name.to(...)`` / ``name.cuda()`` in ``func`` (also ``name = name.to(...)``)."""
    return [s for s in m.calls if s.recv == name and s.ctx.func is func and is_device_move(m, s)]


def dataloaders(m: ModuleIndex) -> list[CallSite]:
    """Every ``DataLoader(...)`` call."""
    return m.calls_named(m.P.dataloaders)


def loader_label(site: CallSite) -> str:
    """What to call a DataLoader in a message: its variable, or ``DataLoader(...)``."""
    return site.assigned_to or "DataLoader(...)"


def dataset_name(site: CallSite) -> str | None:
    """The dotted name of a loader's dataset argument."""
    return dotted(site.arg(0, "dataset"))


def truthy_literal(node: ast.AST | None) -> bool:
    """True for a literal ``True`` (a variable is not assumed)."""
    return const(node) is True


def local_rank_name(m: ModuleIndex) -> str | None:
    """How the script spells its local rank (``local_rank``, ``args.local_rank``), if it has one."""
    for name in sorted(m.loaded, key=lambda n: (-m.loaded[n], n)):
        if last(name) in m.P.local_rank_names:
            return name
    for name in m.bindings:
        if last(name) in m.P.local_rank_names:
            return name
    return None


def collective_names(m: ModuleIndex) -> set[str]:
    """Qualified names of the collectives (``torch.distributed.all_reduce`` and its c10d spelling)."""
    return {f"{module}.{c}" for c in m.P.collectives
            for module in ("torch.distributed", "torch.distributed.distributed_c10d")}


def contains(outer: ast.AST, inner: ast.AST) -> bool:
    """True when node ``inner`` is ``outer`` or lies lexically inside it."""
    return any(node is inner for node in walk(outer))


def wrapped_models(m: ModuleIndex) -> dict[str, CallSite]:
    """Names bound to a model a DDP wrapper or a framework prepared (``model, opt = accelerator.prepare(...)``)."""
    out = dict(wrapper_names(m))
    for site in m.calls:
        if site.method not in m.P.model_preparers or site.recv is None:
            continue
        if site.assigned_to and len(site.node.args) == 1:
            out.setdefault(site.assigned_to, site)
        for arg, target in zip(site.node.args, site.unpacked_to):
            if target and dotted(arg):
                out.setdefault(target, site)
    return out


def local_callee(m: ModuleIndex, site: CallSite) -> FuncInfo | None:
    """The local function or method a call reaches, when its name is defined once in the file."""
    if site.recv is not None and site.recv != "self" and site.recv.partition(".")[0] in m.aliases:
        return None  # a call into an imported module
    if site.recv is None and isinstance(site.node.func, ast.Name) and site.node.func.id != site.method:
        return None  # ``from utils_eval import main as evaluate_on_squad``: an import, not the file's ``main``
    infos = m.functions.get(site.method)
    if not infos or len(infos) != 1 or infos[0].name == "<class>":
        return None
    info = infos[0]
    func = site.node.func
    if site.recv is None and isinstance(func, ast.Attribute) and isinstance(func.value, ast.Call):
        made = m.site_of(func.value)  # ``Evaluator(model).run()``: a method of an object built in the call
        return info if info.cls is not None and made is not None and made.method == info.cls else None
    if (site.recv is None) != (info.cls is None):
        return None  # a bare call reaches a function, ``obj.name()`` a method
    if site.recv is not None and site.recv != "self" and not site.recv.startswith("self."):
        binding = m.binding(site.recv, site.line, site.ctx.func)
        made = m.site_of(binding.value) if binding is not None and isinstance(binding.value, ast.Call) else None
        if made is None or made.method not in m.classes:
            return None  # ``coco_eval.evaluate()``: an object of a class this file does not define
    return info


def value_returns(m: ModuleIndex, func: FuncInfo) -> list[ast.Return]:
    """The ``return`` statements of ``func`` that return a value (nested definitions' too, as the index walks them),
    in walk order."""
    return [n for n in m.nodes_in(func.node) if isinstance(n, ast.Return) and n.value is not None]


def callers_of(m: ModuleIndex, func: FuncInfo) -> list[CallSite]:
    """The calls of this file that reach the local function ``func`` (:func:`local_callee`), in file order. Every
    call's callee is resolved once per module: a checker asking about each function in turn stays linear."""
    table = m.memo.get("callers")
    if table is None:
        table = m.memo["callers"] = {}
        for site in m.calls:
            callee = local_callee(m, site)
            if callee is not None:
                table.setdefault(id(callee), []).append(site)
    return table.get(id(func), [])


def function_arguments(m: ModuleIndex, site: CallSite) -> tuple[FuncInfo | None, list[tuple[ast.expr, str]]]:
    """The plain local function (not a method) a call reaches, with each positional argument paired to the
    parameter it binds; ``(None, [])`` when the callee is unknown or a method."""
    callee = local_callee(m, site)
    if callee is None or callee.cls is not None:
        return None, []
    return callee, list(zip(site.node.args, (a.arg for a in callee.node.args.args)))


def option_sites(m: ModuleIndex, name: str | None) -> list[CallSite]:
    """The ``add_argument(...)`` calls declaring the command-line option an attribute reads (``args.shuffle`` from
    ``add_argument("--shuffle", ...)`` or ``dest="shuffle"``), in file order; none when something in the file
    assigns that attribute (its value is then not the option's alone)."""
    attr = last(name) if name and "." in name else None
    if attr is None or any(last(t) == attr and "." in t for t in m.bindings):
        return []
    found = []
    for s in m.calls:
        if s.method != "add_argument":
            continue
        dest = const(s.kw("dest")) or next((str(const(a)).lstrip("-").replace("-", "_") for a in s.node.args
                                            if str(const(a)).startswith("--")), None)
        if dest == attr:
            found.append(s)
    return found


def option_default(m: ModuleIndex, name: str | None) -> ast.AST | None:
    """The ``default=`` node of the command-line option an attribute reads (``args.shuffle`` from
    ``add_argument("--shuffle", default=True)``), when nothing in the file assigns that attribute."""
    return next((s.kw("default") for s in option_sites(m, name) if s.kw("default") is not None), None)


def config_default(m: ModuleIndex, name: str | None) -> ast.AST | None:
    """The literal default of a configuration class field an attribute reads (``cfg.shuffle`` with ``@dataclass
    class DataConfig: shuffle: bool = True``): one local class declares the field with a literal default, the class
    is only ever built by direct calls that leave the field alone (no keyword for it, no positional argument reaching
    it, no ``**`` spread; not handed to a parser or a ``from_*`` constructor), and nothing in the file assigns the
    attribute, nor sets fields by name (``setattr``, ``__dict__``, ``vars()``, ``dataclasses.replace``)."""
    attr = last(name) if name and "." in name else None
    if attr is None or any(last(t) == attr and "." in t for t in m.bindings) or any(
            word in m.text for word in m.P.dynamic_field_updates):
        return None
    declared = []
    for cls in m.classes.values():
        fields = [s.target.id for s in cls.body if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name)]
        if attr in fields:
            declared.append((cls, fields.index(attr)))
    if len(declared) != 1:
        return None
    cls, index = declared[0]
    value = next(s.value for s in cls.body if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name)
                 and s.target.id == attr)
    if value is None or const(value, default=...) is ...:
        return None
    built = {id(c.node.func) for c in m.calls if isinstance(c.node.func, ast.Name) and c.node.func.id == cls.name}
    annotations = {id(n) for node in walk(m.tree) for a in _annotations(node) for n in walk(a)}
    if any(isinstance(n, ast.Name) and n.id == cls.name and id(n) not in built | annotations for n in walk(m.tree)):
        return None  # HfArgumentParser((DataConfig,)), DataConfig.from_yaml(path), OmegaConf.structured(DataConfig)
    for c in m.calls:
        if id(c.node.func) in built and (any(k.arg in (None, attr) for k in c.node.keywords) or len(c.node.args) > index):
            return None
    return value


def _annotations(node: ast.AST) -> list[ast.AST]:
    if isinstance(node, ast.arg):
        return [node.annotation] if node.annotation is not None else []
    if isinstance(node, ast.AnnAssign):
        return [node.annotation]
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.returns is not None:
        return [node.returns]
    return []


def resolved_const(m: ModuleIndex, node: ast.AST | None, site: CallSite, default=None):
    """The literal value an argument evidently holds: a literal; a name the function only ever binds to that
    literal; an option's unchanged default (``args.shuffle``); a key of a dict literal (``cfg["shuffle"]``)."""
    value = const(node, default=...)
    if value is not ...:
        return value
    name = dotted(node)
    if name:
        found = option_default(m, name)
        if found is None:
            found = config_default(m, name)
        if found is not None:
            return const(found, default=default)
        bindings = [b for b in m.bindings.get(name, ()) if b.func is site.ctx.func]
        values = {repr(const(b.value, default=...)) for b in bindings}
        if bindings and len(values) == 1 and "Ellipsis" not in values:
            return const(bindings[0].value)
        if not bindings:
            passed = parameter_value(m, name, site.ctx.func)
            if passed is not ...:
                return passed
            module = [b for b in m.bindings.get(name, ()) if b.func is None]  # ``FIND_UNUSED = True`` at the top
            values = {repr(const(b.value, default=...)) for b in module}
            if site.ctx.func is not None and module and len(module) == len(m.bindings[name]) and len(values) == 1 \
                    and "Ellipsis" not in values and name not in _parameters(site.ctx.func):
                return const(module[0].value)
    if isinstance(node, ast.Subscript) and isinstance(const(node.slice, default=...), str):
        binding = m.binding(dotted(node.value), site.line, site.ctx.func) if dotted(node.value) else None
        if binding is not None and isinstance(binding.value, ast.Dict):
            for key, value_node in zip(binding.value.keys, binding.value.values):
                if key is not None and const(key, default=...) == const(node.slice):
                    return const(value_node, default=default)
    return default


def _parameters(func: FuncInfo) -> set[str]:
    args = func.node.args
    return {a.arg for a in [*args.posonlyargs, *args.args, *args.kwonlyargs]}


def takes_parameter(func: FuncInfo, name: str) -> bool:
    """Whether ``func`` declares a parameter ``name`` (positional or keyword-only)."""
    args = func.node.args
    return any(a.arg == name for a in [*args.posonlyargs, *args.args, *args.kwonlyargs])


def argument_given(func: FuncInfo, name: str, call: ast.Call) -> ast.AST | None:
    """The node ``call`` gives parameter ``name`` of ``func``: its keyword, else its positional slot (a method's
    ``self``/``cls`` is not passed), else the parameter's default; None when it has none."""
    given = next((k.value for k in call.keywords if k.arg == name), None)
    if given is not None:
        return given
    args = func.node.args
    positional = [a.arg for a in [*args.posonlyargs, *args.args]]
    if name in positional:
        skip = 1 if func.cls is not None and positional[0] in ("self", "cls") else 0
        slot = positional.index(name) - skip
        if 0 <= slot < len(call.args):
            return call.args[slot]
        first_default = len(positional) - len(args.defaults)
        index = positional.index(name)
        return args.defaults[index - first_default] if index >= first_default else None
    return next((d for a, d in zip(args.kwonlyargs, args.kw_defaults) if a.arg == name), None)


def parameter_value(m: ModuleIndex, name: str, func: FuncInfo | None):
    """The literal a parameter of a local function or method evidently holds: every call of it in the file passes
    the same literal, or leaves it at its literal default (``def build_loader(ds, shuffle=True)`` called as
    ``build_loader(train_set)``). ``...`` when a call passes anything else, spreads ``*args``/``**kwargs``, or
    nothing in the file calls the function. A constructor's parameter is read off the class's instantiations
    (``HDFDataLoader(files, shuffle=True)`` for ``def __init__(self, files, shuffle=True)``)."""
    if func is None or func.name == "<class>" or "." in name or not takes_parameter(func, name):
        return ...
    calls = [c for c in m.calls if local_callee(m, c) is func] or _instantiations(m, func)
    values = set()
    for call in calls:
        if any(k.arg is None for k in call.node.keywords) or any(isinstance(a, ast.Starred) for a in call.node.args):
            return ...
        value = const(argument_given(func, name, call.node), default=...)
        if value is ...:
            return ...
        values.add(repr(value))
        last_value = value
    return last_value if calls and len(values) == 1 else ...


def _instantiations(m: ModuleIndex, func: FuncInfo) -> list[CallSite]:
    """The calls that build an object of ``func``'s class when ``func`` is its only ``__init__``
    (``Cls(...)``, not a call of an imported namesake)."""
    if func.name != "__init__" or func.cls not in m.classes \
            or sum(f.cls == func.cls for f in m.functions.get("__init__", ())) != 1:
        return []
    return [c for c in m.calls if c.recv is None and c.method == func.cls and isinstance(c.node.func, ast.Name)]


def spread_keywords(m: ModuleIndex, site: CallSite) -> dict[str, ast.AST]:
    """The keyword arguments a call passes through ``**name`` when the function builds that dict itself:
    ``{...}`` / ``dict(...)`` bindings of ``name``, ``name.update(...)`` calls and ``name["key"] = value`` stores
    before the call (inside an ``if`` too: the key is passed whenever that arm ran). A later key wins, as in the
    dict."""
    found: dict[str, ast.AST] = {}
    for keyword in site.node.keywords:
        if keyword.arg is None:
            found.update(dict_keys(m, keyword.value, site.line, site.ctx.func, depth=2))
    return found


def dict_keys(m: ModuleIndex, node: ast.AST, before: int, func: FuncInfo | None, depth: int) -> dict[str, ast.AST]:
    """String keys -> value nodes of a dict expression: a literal, ``dict(k=v)``, or a name built up to ``before``."""
    if isinstance(node, ast.Dict):
        keys = {}
        for key, value in zip(node.keys, node.values):
            if key is None and depth:
                keys.update(dict_keys(m, value, before, func, depth - 1))
            elif isinstance(const(key, default=...), str):
                keys[const(key)] = value
        return keys
    if isinstance(node, ast.Call) and dotted(node.func) == "dict" and not node.args:
        return {k.arg: k.value for k in node.keywords if k.arg}
    name = dotted(node)
    binding = m.binding(name, before, func) if name and depth else None
    if binding is None:
        return {}
    keys = dict_keys(m, binding.value, binding.line, func, depth - 1)
    changes: list[tuple[int, dict[str, ast.AST]]] = []
    for update in m.calls:
        if (update.method == "update" and update.recv == name and update.ctx.func is func
                and binding.line < update.line < before and len(update.node.args) <= 1):
            added = dict_keys(m, update.node.args[0], update.line, func, depth - 1) if update.node.args else {}
            changes.append((update.line, {**added, **{k.arg: k.value for k in update.node.keywords if k.arg}}))
    for node in m.nodes_in(func.node if func else m.tree):  # name["key"] = value, also inside an ``if``
        if node.__class__ is ast.Assign and len(node.targets) == 1 and isinstance(node.targets[0], ast.Subscript) \
                and dotted(node.targets[0].value) == name and binding.line < node.lineno < before \
                and isinstance(const(node.targets[0].slice, default=...), str):
            changes.append((node.lineno, {const(node.targets[0].slice): node.value}))
    for _, added in sorted(changes, key=lambda change: change[0]):
        keys.update(added)
    return keys


def launcher_absent_when(m: ModuleIndex, test: ast.AST) -> bool | None:
    """True when ``test`` holds only where no launcher set the rank (``'RANK' not in os.environ``,
    ``os.environ.get("LOCAL_RANK") is None``: one process), False when it fails only then (``'RANK' in os.environ
    and 'WORLD_SIZE' in os.environ``), None otherwise. The variables: the upper-case rank names and process counts."""
    if isinstance(test, ast.NamedExpr):  # ``if (alone := 'RANK' not in os.environ):`` tests the value it binds
        return launcher_absent_when(m, test.value)
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        inner = launcher_absent_when(m, test.operand)
        return None if inner is None else not inner
    if isinstance(test, ast.BoolOp):  # every operand must say the same: all present (and), all absent (or)
        parts = {launcher_absent_when(m, value) for value in test.values}
        wanted = False if isinstance(test.op, ast.And) else True
        return wanted if parts == {wanted} else None
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1):
        return None
    op, right = test.ops[0], test.comparators[0]
    if isinstance(op, (ast.In, ast.NotIn)) and dotted(right) in ("os.environ", "environ"):
        key = const(test.left)
        absent = isinstance(op, ast.NotIn)
    elif isinstance(op, (ast.Is, ast.IsNot)) and const(right, default=...) is None and isinstance(test.left, ast.Call) \
            and (dotted(test.left.func) or "") in ("os.environ.get", "environ.get", "os.getenv", "getenv"):
        key = const(test.left.args[0]) if test.left.args else None
        absent = isinstance(op, ast.Is)
    else:
        return None
    if not isinstance(key, str) or not key.isupper():
        return None
    return absent if key in m.P.rank_names or key.lower() in m.P.process_count_words else None


def bare_cuda_placements(m: ModuleIndex):
    """Modules or tensors placed on the bare ``"cuda"`` device (``.to("cuda")``, ``.to(torch.device("cuda"))``,
    ``device=`` of a torch factory, or a name bound to one of those) on every rank's path. A device string handed
    to a library helper (which may pick the rank's GPU itself) is not a placement."""
    for s in m.calls:
        if s.ctx.dist_branch or any(entry[1] == RANK0 for entry in s.ctx.sides) or (s.ctx.func and s.ctx.func.rank0):
            continue
        if s.method == "to" and isinstance(s.node.func, ast.Attribute):
            placed = s.arg(0, "device")
        elif s.name.startswith("torch.") and s.name != "torch.device":
            placed = s.kw("device")
        else:
            continue
        if placed is not None and bare_cuda(m, placed, s):
            yield s


def bare_cuda(m: ModuleIndex, node: ast.AST | None, site: CallSite) -> bool:
    """``"cuda"`` or ``torch.device("cuda")`` with no index, directly or through a name the site's function binds
    to one of them."""
    name = dotted(node) if isinstance(node, (ast.Name, ast.Attribute)) else None
    if name and "." not in name:
        bound = [b for b in m.bindings.get(name, ()) if b.ctx.func is site.ctx.func and b.line <= site.line]
        node = max(bound, key=lambda b: b.line).value if bound else None
    elif name and name.startswith("self.") and name.count(".") == 1:  # ``self.device = torch.device("cuda")``
        cls = site.ctx.func.cls if site.ctx.func else None
        bound = [b for b in m.bindings.get(name, ()) if cls and b.func and b.func.cls == cls]
        node = bound[0].value if len(bound) == 1 else None
    if const(node, default=...) == "cuda":
        return True
    made = m.site_of(node) if isinstance(node, ast.Call) else None
    return made is not None and made.name == "torch.device" and const(made.arg(0)) == "cuda" \
        and made.arg(1, "index") is None


def derivation(m, node: ast.AST, site, depth: int = 3) -> list[ast.AST]:
    """``node`` and the values its names were last assigned in the same function, followed ``depth`` steps back
    (``path = os.path.join(folder, name)``, ``name = f"shard_{me}.pt"``, ``me = dist.get_rank()``); ``site``: the
    call or binding the node belongs to (its line and function)."""
    found, frontier = [node], [node]
    for _ in range(depth):
        names = {dotted(n) for root in frontier for n in walk(root) if isinstance(n, (ast.Name, ast.Attribute))}
        frontier = [b.value for b in (m.binding(name, site.line, site.ctx.func) for name in sorted(names - {None}))
                    if b is not None and all(b.value is not seen for seen in found)]
        found.extend(frontier)
    return found
