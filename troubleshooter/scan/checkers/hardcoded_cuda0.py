"""hardcoded-cuda0: device pinned to cuda:0 in a DDP script instead of the local rank."""

from __future__ import annotations

import ast
import re

from troubleshooter.scan.checkers import Checker, Hit
from troubleshooter.scan.checkers._common import (
    bare_cuda, contains, ddp_wraps, local_callee, local_rank_name, option_default, resolved_const,
)
from troubleshooter.scan.model import RANK0, const, dotted, last, source


class HardcodedCuda0Checker(Checker):
    """``"cuda:0"``, ``.cuda(0)``, ``set_device(0)``, ``device_ids=[0]``, ``map_location="cuda:0"``."""

    id = "hardcoded-cuda0"

    def check(self, m):
        pinned = _visible_devices_pinned(m, m.tree.body, ())
        if pinned is not None and _devices_by_rank(m):
            yield Hit(pinned.lineno, f"CUDA_VISIBLE_DEVICES is set to the constant {const(pinned)!r} for every "
                                     "process: all ranks see (and share) the same single GPU; leave it to the "
                                     "launcher or pick the device from the local rank",
                      {"device": f"cuda:{const(pinned)}", "variable": local_rank_name(m) or "local_rank"})
            return
        if m.project is not None and m.project.one_visible_gpu:
            return  # each process sees only its own GPU (CUDA_VISIBLE_DEVICES set per rank): cuda:0 is that GPU
        rank = local_rank_name(m) or "local_rank"
        seen: set[int] = set()
        for line, node, text in [*self._candidates(m), *self._other_constant_gpu(m)]:
            if line in seen:
                continue
            seen.add(line)
            gpu = text.partition(":")[2] if text.startswith("cuda:") else "0"
            yield Hit(line, f"{source(node)} pins every rank to GPU {gpu}: all processes share one GPU (OOM, "
                            f"'Duplicate GPU detected'); use cuda:{{{rank}}}",
                      {"device": text, "variable": rank})
        for site in _placed_before_device_picker(m):
            if site.line not in seen:
                seen.add(site.line)
                yield Hit(site.line, f"{source(site.node)} places on the default GPU before the Accelerator picks each "
                                     "process's GPU: every process puts it on GPU 0 (uneven memory, OOM); build the "
                                     "Accelerator first and use accelerator.device or accelerator.prepare()",
                          {"device": "cuda", "variable": "accelerator.device"})
        for site in self._loads_without_placement(m):
            if site.line not in seen:
                seen.add(site.line)
                yield Hit(site.line, f"{source(site.node)} has no map_location: every rank restores the checkpoint "
                                     "onto the GPU it was saved from (GPU 0), so GPU 0 holds a copy per process "
                                     f"(OOM, uneven memory); load with map_location=\"cpu\" or f\"cuda:{{{rank}}}\"",
                          {"device": "cuda:0", "variable": rank})

    def _loads_without_placement(self, m):
        """``torch.load(path)`` with no ``map_location`` (keyword, second argument or ``**kwargs``; or
        ``map_location=None``) on every rank's
        path of a DDP run (``device_restoring_loaders``), reading back a checkpoint this script writes from the
        training's own (GPU) state: a ``checkpoint_writers`` call (or a local helper that makes one:
        ``save_on_master(obj, path)``) whose payload holds a model's or optimizer's ``state_dict()``, and a load whose path names the same file (``_path_keys``: ``self.snapshot_path`` /
        ``snapshot_path``, ``str(path)``, ``os.path.join(dir, NAME)``, ``dir / f"{n}_state.pt"``) or is a resume
        option (``resume_path_names``: ``args.resume``, ``opt.ckpt``). Files of other origin (downloaded weights,
        cached features) are usually CPU tensors and stay quiet."""
        savers = {id(s.ctx.func) for s in m.calls if s.name in m.P.checkpoint_writers and s.ctx.func is not None}
        writers = [s for s in m.calls if (s.name in m.P.checkpoint_writers or _runs_saver(m, s, savers))
                   and _holds_state_dict(m, s)]
        if not writers:
            return
        written = set().union(*(_path_keys(s.arg(1, "f")) for s in writers))
        for s in m.calls:
            placed = s.kw("map_location")
            if s.name in m.P.device_restoring_loaders and (placed is None or _none(placed)) and len(s.node.args) < 2 \
                    and not any(k.arg is None for k in s.node.keywords) and not self._skip(s.ctx):
                keys = _path_keys(s.arg(0, "f"))
                if keys & written or any(m.P.matches("resume_path_names", k) for k in keys):
                    yield s

    @staticmethod
    def _skip(ctx) -> bool:
        """Code that runs on one rank only, or only without distributed training, may use GPU 0."""
        return ctx.dist_branch or any(entry[1] == RANK0 for entry in ctx.sides) or bool(ctx.func and ctx.func.rank0)

    def _candidates(self, m):
        wraps = {id(w.node) for w in ddp_wraps(m)}
        fallbacks = _one_process_fallbacks(m)
        for s in m.calls:
            if self._skip(s.ctx) or id(s.node) in fallbacks:
                continue
            pinned = _pinned_by_call(m, s, wraps)
            if pinned is not None and not _in_one_gpu_arm(m, s.node, s.ctx.func):  # the arm test last: it walks
                yield s.line, s.node, pinned  # the call's whole function
        for bindings in m.bindings.values():
            for b in bindings:
                if not self._skip(b.ctx) and id(b.value) not in fallbacks and _cuda0(m, b.value) \
                        and not _in_one_gpu_arm(m, b.value, b.func):
                    yield b.line, b.value, "cuda:0"
        if not any(s.name in m.P.set_device and s.arg(0) is not None and m.mentions_rank(s.arg(0)) for s in m.calls):
            yield from self._config_devices(m)
        yield from self._defaults(m)

    def _other_constant_gpu(self, m):
        """The process's device chosen as one constant GPU other than 0 (``set_device(1)``,
        ``torch.device("cuda:2")``, ``torch.device("cuda", 3)``): every rank runs on that GPU. Not when the script
        names several constant GPUs (a model split over devices by design) or picks devices by the rank."""
        picks = []
        for s in m.calls:
            if s.name in m.P.set_device:
                index = _device_index(s.arg(0, "device"))
            elif s.name == "torch.device":
                first = const(s.arg(0))
                index = _device_index(s.arg(1, "index")) if first == "cuda" else _device_index(s.arg(0))
            else:
                continue
            if index is not None and not self._skip(s.ctx):
                picks.append((index, s))
        constants = {index for index, _ in picks} | {
            _device_index(s.arg(0, "device")) for s in m.calls if s.method in ("cuda", "to")} - {None}
        if len(constants) != 1 or 0 in constants or _devices_by_rank(m):
            return
        for index, site in picks:
            yield site.line, site.node, f"cuda:{index}"

    @staticmethod
    def _defaults(m):
        """A default of "cuda:0" that is used as is: a command-line option (``--device`` default "cuda:0") whose
        value is never reassigned, or a parameter default (``def __init__(self, device="cuda:0")``) of a function
        every call of which leaves it out."""
        moved = {dotted(s.arg(0, "device")) for s in m.calls if s.method in ("to", "cuda", "device")} | {
            dotted(s.kw("device")) for s in m.calls}
        defaults = {id(d): d for d in (option_default(m, n) for n in sorted(filter(None, moved))) if d is not None}
        for default in defaults.values():
            if const(default) == "cuda:0":
                yield default.lineno, default, "cuda:0"
        yield from _option_gpu_indices(m)
        for infos in m.functions.values():
            for info in infos:
                args = info.node.args
                params = [*args.posonlyargs, *args.args]
                for param, value in zip(params[len(params) - len(args.defaults):], args.defaults):
                    if const(value) != "cuda:0":
                        continue
                    calls = [c for c in m.calls if local_callee(m, c) is info or (
                        info.name == "__init__" and c.method == info.cls and c.recv is None)]
                    position = params.index(param) - (1 if params and params[0].arg == "self" else 0)
                    if calls and all(c.kw(param.arg) is None and len(c.node.args) <= position for c in calls):
                        yield value.lineno, value, "cuda:0"

    @staticmethod
    def _config_devices(m):
        """A configuration literal ``{"device": "cuda:0"}`` when no set_device call uses the rank."""
        for node in m.nodes_of(ast.Dict):
            for key, value in zip(node.keys, node.values):
                if isinstance(key, ast.Constant) and isinstance(key.value, str) and "device" in key.value.lower() \
                        and isinstance(value, ast.Constant) and value.value == "cuda:0":
                    yield value.lineno, value, "cuda:0"


def _placed_before_device_picker(m):
    """Bare ``"cuda"`` placements (``.cuda()``, ``.to("cuda")``, ``torch.device("cuda")``) that run before the object
    that binds each process to its GPU is built (``device_pickers``: Accelerate's ``Accelerator`` /
    ``PartialState`` call ``torch.cuda.set_device`` on construction): earlier in the same function, or in the
    function (or module level) that reaches that construction through a local function or class
    (``model.cuda()`` then ``Trainer(model)`` whose ``__init__`` builds the Accelerator). Until then the current
    device of every process is GPU 0."""
    points = [s for s in m.calls if s.name in m.P.device_pickers and not HardcodedCuda0Checker._skip(s.ctx)]
    building = {id(s.ctx.func) for s in points if s.ctx.func is not None}
    for _ in range(3):  # the construction reached through up to three local calls
        more = [s for s in m.calls if s not in points and _reaches(m, s, building)]
        if not more:
            break
        points += more
        building |= {id(s.ctx.func) for s in more if s.ctx.func is not None}
    if not points:
        return
    for s in m.calls:
        if HardcodedCuda0Checker._skip(s.ctx) or not isinstance(s.node.func, ast.Attribute):
            continue
        bare = (s.method == "cuda" and not s.node.args and not s.node.keywords) or (
            s.method == "to" and bare_cuda(m, s.arg(0, "device"), s))
        if bare and any(p.ctx.func is s.ctx.func and s.line < p.line for p in points):
            yield s


def _pinned_by_call(m, s, wraps: set[int]) -> str | None:
    """How the call pins GPU 0 (``"cuda:0"``, ``"cuda(0)"``, ``"to(0)"``, ``"device_ids=[0]"``), else None."""
    first = s.arg(0)
    if s.name == "torch.device" and (_cuda0(m, s.arg(0, "type")) or (
            const(s.arg(0, "type")) == "cuda" and const(s.arg(1, "index")) == 0)):
        return "cuda:0"  # also spelled with keywords: torch.device(type="cuda", index=0)
    if s.method == "to" and isinstance(s.node.func, ast.Attribute) and _cuda0(m, s.arg(0, "device")):
        return "cuda:0"
    if _cuda0(m, s.kw("device")):  # torch.zeros(n, device="cuda:0"), Generator(device=...)
        return "cuda:0"
    if s.method == "cuda" and isinstance(s.node.func, ast.Attribute) and (
            const(s.arg(0, "device")) == 0 or _named_zero(m, s.arg(0, "device"), s)):
        return "cuda(0)"
    if s.method == "to" and isinstance(s.node.func, ast.Attribute) and (
            _is_zero(s.arg(0, "device")) or _named_zero(m, s.arg(0, "device"), s)):
        return "to(0)"
    if s.name in m.P.set_device and (const(first) in (0, "cuda:0") or _named_zero(m, first, s)):
        return "cuda:0"
    if const(s.kw("map_location")) == "cuda:0":
        return "cuda:0"
    if id(s.node) in wraps and (const(s.kw("device_ids")) in ([0], (0,)) or const(s.kw("output_device")) == 0):
        return "device_ids=[0]"
    return None


def _named_zero(m, node, site) -> bool:
    """A plain name that evidently holds GPU index 0 (``GPU_ID = 0`` at the top of the file, ``gpu = 0`` as the
    function's only binding of it, a parameter every call leaves at 0): ``model.cuda(GPU_ID)`` pins GPU 0 as
    ``model.cuda(0)`` does."""
    if not isinstance(node, ast.Name) or m.mentions_rank(node):
        return False
    value = resolved_const(m, node, site, default=...)
    return value == 0 and not isinstance(value, bool)


def _reaches(m, site, building: set[int]) -> bool:
    """The call runs a local function, or builds a local class whose ``__init__`` is, among ``building``."""
    callee = local_callee(m, site)
    if callee is not None:
        return id(callee) in building
    return site.recv is None and site.method in m.classes and any(
        id(info) in building for info in m.functions.get("__init__", ()) if info.cls == site.method)


def _one_process_fallbacks(m) -> set[int]:
    """Values bound to a name that the same function (or module level) also binds to a rank-derived device:
    ``args.device = "cuda:0"`` then ``if args.distributed: args.device = "cuda:%d" % args.local_rank``, or
    ``device = torch.device("cuda", local_rank)`` in one arm and ``torch.device("cuda", 0)`` in the other. The
    script picks the device per rank on its distributed path; the constant is the one-process fallback."""
    fallbacks: set[int] = set()
    setups: dict[int, list] = {}  # id(function) -> its calls whose name has a distributed word
    for s in m.calls:
        if any(w in s.method.lower() for w in m.P.distributed_flag_words):
            setups.setdefault(id(s.ctx.func), []).append(s)
    for bindings in m.bindings.values():
        by_rank = {id(b.func) for b in bindings if m.mentions_rank(b.value)}
        fallbacks.update(id(b.value) for b in bindings if id(b.func) in by_rank and not m.mentions_rank(b.value))
        fallbacks.update(id(b.value) for b in bindings if _handed_to_distributed_setup(b, setups)
                         or _rebound_by_rank_in_callee(m, b))
    return fallbacks


def _in_one_gpu_arm(m, node: ast.AST, func) -> bool:
    """The node (a call, a bound value) sits in the arm of an ``if`` that runs only when this process sees a single GPU: ``if
    torch.cuda.device_count() == 1:`` (``<= 1``, ``< 2``, the ``else`` of ``> 1`` / ``>= 2`` / ``!= 1``; the count
    may be bound to a name first). One GPU per task (``--gpus-per-task=1``, a per-rank CUDA_VISIBLE_DEVICES): GPU 0
    is this rank's own GPU."""
    for branch in m.nodes_in(func.node if func is not None else m.tree):
        if isinstance(branch, ast.If):
            alone = _one_gpu_when(m, branch.test, branch.lineno, func)
            arm = branch.body if alone else branch.orelse if alone is False else ()
            if any(contains(stmt, node) for stmt in arm):
                return True
    return False


def _one_gpu_when(m, test: ast.AST, line: int, func) -> bool | None:
    """True when ``test`` holds only with one visible GPU, False when it fails only then, None otherwise."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        inner = _one_gpu_when(m, test.operand, line, func)
        return None if inner is None else not inner
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1):
        return None
    counted = test.left
    if isinstance(counted, ast.Name):  # ``n_gpu = torch.cuda.device_count()`` then ``if n_gpu == 1:``
        bound = m.binding(counted.id, line, func)
        counted = bound.value if bound is not None else counted
    made = m.site_of(counted) if isinstance(counted, ast.Call) else None
    if made is None or last(made.name or made.method) != "device_count":
        return None
    bound, op = const(test.comparators[0]), test.ops[0]
    if bound == 1 and isinstance(op, (ast.Eq, ast.LtE)) or bound == 2 and isinstance(op, ast.Lt):
        return True
    if bound == 1 and isinstance(op, (ast.Gt, ast.NotEq)) or bound == 2 and isinstance(op, ast.GtE):
        return False
    return None


def _handed_to_distributed_setup(binding, setups) -> bool:
    """``args.device = "cuda:0"`` and then ``init_distributed_device(args)`` (timm's ``train.py`` and its many
    forks; ``init_distributed_mode(args)``, ``setup_ddp(cfg)``): the object goes to a distributed set-up call, which
    sets its device per rank; the constant is the one-process default. ``setups``: each function's calls whose name
    has a distributed word (``distributed_flag_words``), found once per module."""
    owner, dot, _ = binding.target.rpartition(".")
    if not dot:
        return False
    return any(s.line > binding.line and any(dotted(a) == owner for a in s.node.args)
               for s in setups.get(id(binding.func), ()))


def _rebound_by_rank_in_callee(m, binding) -> bool:
    """``args.device = "cuda:0"`` and then ``Setup().build(args)`` (or any local function or method given ``args``)
    whose body rebinds ``<its parameter>.device`` to a rank-derived value: the call picks the device per rank, the
    constant is the one-process default, whatever the call is named."""
    owner, dot, attr = binding.target.rpartition(".")
    if not dot:
        return False
    for site in m.calls:
        if site.ctx.func is not binding.func or site.line <= binding.line:
            continue
        position = next((i for i, a in enumerate(site.node.args) if dotted(a) == owner), None)
        keyword = next((k.arg for k in site.node.keywords if k.arg and dotted(k.value) == owner), None)
        if position is None and keyword is None:
            continue
        callee = local_callee(m, site)
        if callee is None:
            continue
        params = [a.arg for a in [*callee.node.args.posonlyargs, *callee.node.args.args]]
        if callee.cls is not None and params and params[0] in ("self", "cls"):
            params = params[1:]
        param = keyword if keyword is not None else params[position] if position < len(params) else None
        if param and any(b.func is callee and m.mentions_rank(b.value) for b in m.bindings.get(f"{param}.{attr}", ())):
            return True
    return False


def _cuda0(m, node) -> bool:
    """``"cuda:0"``, or ``"cuda:0" if torch.cuda.is_available() else "cpu"``: GPU 0 whenever there is a GPU (the test
    asks about the machine, not the rank or a distributed switch)."""
    if const(node, default=...) == "cuda:0" or const(_dict_entry(m, node), default=...) == "cuda:0":
        return True
    if not isinstance(node, ast.IfExp) or "cuda:0" not in (const(node.body, default=...), const(node.orelse, default=...)):
        return False
    words = {w.lower() for n in ast.walk(node.test) for w in (getattr(n, "id", None), getattr(n, "attr", None)) if w}
    return not m.mentions_rank(node.test) and not any(f in w for w in words for f in m.P.distributed_flag_words)


def _dict_entry(m, node) -> ast.AST | None:
    """``cfg["device"]`` where ``cfg`` is bound once, to a dict literal: the value under that key (a settings dict
    written in the script: ``cfg = {"device": "cuda:0", ...}``)."""
    if not isinstance(node, ast.Subscript) or not isinstance(const(node.slice, default=...), str):
        return None
    bindings = m.bindings.get(dotted(node.value) or "", ())
    if len(bindings) != 1 or not isinstance(bindings[0].value, ast.Dict):
        return None
    found = bindings[0].value
    return next((v for k, v in zip(found.keys, found.values) if k is not None and const(k, default=...) == const(node.slice)),
                None)


def _visible_devices_pinned(m, body, tests):
    """``os.environ["CUDA_VISIBLE_DEVICES"] = "0"`` (one constant device) outside any rank-dependent branch: the
    value it assigns, else None."""
    for stmt in body:
        if isinstance(stmt, ast.Assign) and any(
                isinstance(t, ast.Subscript) and const(t.slice) == "CUDA_VISIBLE_DEVICES" for t in stmt.targets):
            value = const(stmt.value)
            if isinstance(value, str) and value.strip().isdigit() and not any(m.mentions_rank(t) for t in tests):
                return stmt.value
        for field in ("body", "orelse", "finalbody"):
            inner = getattr(stmt, field, None)
            if isinstance(inner, list) and inner and not isinstance(stmt, ast.ClassDef):
                extra = (stmt.test,) if isinstance(stmt, ast.If) else ()
                found = _visible_devices_pinned(m, inner, tests + extra)
                if found is not None:
                    return found
    return None


def _devices_by_rank(m) -> bool:
    """The script picks GPUs by the rank (``set_device(local_rank)``, ``device_ids=[local_rank]``,
    ``torch.device("cuda", local_rank)``): it expects several GPUs per node (one process per node may pin "0")."""
    for s in m.calls:
        values = [s.kw("device_ids"), s.kw("device_id")]
        if s.name in m.P.set_device or s.name == "torch.device" or s.method in ("to", "cuda"):
            values += list(s.node.args[:2])
        if any(v is not None and m.mentions_rank(v) for v in values):
            return True
    return False


def _option_gpu_indices(m):
    """A command-line option holding a GPU index (``--gpu``, default 0) that picks every process's device
    (``set_device(args.gpu)``, ``torch.device("cuda", args.gpu)``, ``.cuda(args.gpu)``) and that nothing in the
    file reassigns: every rank gets the same command line, so every rank runs on that GPU. Not an option the
    launcher fills per process (``--local_rank``: a rank name)."""
    picks = []
    for s in m.calls:
        if s.name in m.P.set_device or s.method == "cuda":
            picks.append((s, s.arg(0, "device")))
        elif s.name == "torch.device" and const(s.arg(0)) == "cuda":
            picks.append((s, s.arg(1, "index")))
    picks += [(site, arg) for site, arg in _formatted_gpu_options(m)]
    seen = set()
    for site, arg in picks:
        name = dotted(arg) if arg is not None else None
        if not name or "." not in name or m.mentions_rank(arg) or HardcodedCuda0Checker._skip(site.ctx):
            continue
        default = option_default(m, name)
        if default is not None and _device_index(default) is not None and id(default) not in seen:
            seen.add(id(default))
            yield site.line, site.node, f"cuda:{_device_index(default)}"


def _runs_saver(m, site, savers: set[int]) -> bool:
    """The call runs a local function that writes a checkpoint (``save_on_master(obj, path)``: ``torch.save`` on
    the main process)."""
    callee = local_callee(m, site)
    return callee is not None and id(callee) in savers


def _none(node) -> bool:
    return isinstance(node, ast.Constant) and node.value is None


def _holds_state_dict(m, site) -> bool:
    """The saved payload calls ``.state_dict()`` of an owner of device tensors (a model, an optimizer; not
    ``host_state_owners`` such as an LR scheduler or a grad scaler, whose state is plain numbers), in the call or in
    the value bound to the payload's name in the same function
    (``snapshot = {"MODEL_STATE": model.module.state_dict()}; torch.save(snapshot, path)``)."""
    payload = site.arg(0, "obj")
    values = [payload] if payload is not None else []
    if isinstance(payload, ast.Name):
        values += [b.value for b in m.bindings.get(payload.id, ()) if b.ctx.func is site.ctx.func]
    return any(isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "state_dict"
               and not m.P.matches("host_state_owners", last(dotted(n.func.value) or ""))
               for value in values for n in ast.walk(value))


_PATH_WRAPPERS = frozenset({"str", "Path", "PurePath", "fspath", "expanduser", "abspath", "realpath", "normpath"})
_NAMED_FILE = re.compile(r"[A-Za-z0-9]{2,}")


def _path_keys(node) -> set[str]:
    """What names the file a path expression points at, however it is spelt: the last name (``self.snapshot_path``
    -> snapshot_path), through ``str()`` / ``Path()`` / ``os.fspath()`` wrappers, the last part of
    ``os.path.join(...)`` and of ``directory / name``, and a literal file name or f-string tail that names a file
    (``f"{name}_state_dict.pt"`` -> _state_dict.pt; a bare extension like ``.pt`` names nothing)."""
    if isinstance(node, ast.Name):
        return {node.id}
    if isinstance(node, ast.Attribute):
        return {node.attr}
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
        return _path_keys(node.right)
    if isinstance(node, ast.Call) and node.args:
        callee = last(dotted(node.func) or "")
        if callee in _PATH_WRAPPERS:
            return _path_keys(node.args[0])
        if callee == "join":
            return _path_keys(node.args[-1])
        return set()
    if isinstance(node, ast.JoinedStr) and node.values:
        tail = node.values[-1]
        return _path_keys(tail.value if isinstance(tail, ast.FormattedValue) else tail)
    text = const(node)
    if isinstance(text, str):
        name = text.replace("\\", "/").rpartition("/")[2]
        return {name} if _NAMED_FILE.search(name.rpartition(".")[0] if "." in name else name) else set()
    return set()


def _formatted_gpu_options(m):
    """``f"cuda:{args.gpu}"`` given to ``.to()`` / ``torch.device()`` (directly or through a name the same function
    binds to it): (the call, the formatted attribute), for ``_option_gpu_indices`` to judge like ``.cuda(args.gpu)``."""
    for s in m.calls:
        if s.method == "to" and isinstance(s.node.func, ast.Attribute):
            placed = s.arg(0, "device")
        elif s.name == "torch.device":
            placed = s.arg(0)
        else:
            continue
        if isinstance(placed, ast.Name):
            bound = [b for b in m.bindings.get(placed.id, ()) if b.ctx.func is s.ctx.func and b.line <= s.line]
            placed = max(bound, key=lambda b: b.line).value if bound else None
        if isinstance(placed, ast.JoinedStr) and len(placed.values) == 2 and const(placed.values[0]) == "cuda:" \
                and isinstance(placed.values[1], ast.FormattedValue):
            yield s, placed.values[1].value


def _device_index(node) -> int | None:
    """The GPU a constant names: ``1``, ``"cuda:1"``; None for anything else."""
    value = const(node)
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str) and value.startswith("cuda:") and value[5:].isdigit():
        return int(value[5:])
    return None


def _is_zero(node) -> bool:
    """The integer device index 0 (``.to(0)``), not False."""
    value = const(node)
    return value == 0 and not isinstance(value, bool) and isinstance(value, int)


CHECKER = HardcodedCuda0Checker()
