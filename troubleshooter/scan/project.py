"""What the files of one scan, and the local modules they import, tell about each other.

A training script rarely holds all of its set-up: ``init_process_group`` lives in ``utils.py``,
``print`` is silenced on non-zero ranks by ``util/misc.py``, the rank-0 predicate is ``utils.is_primary``,
and a framework (Accelerate, Lightning, HF Trainer, DeepSpeed) may do the distributed work.
:class:`Project` summarises every module once (one :func:`ast.walk`) so each file is judged with
that knowledge: whether the run is distributed and through what, which names are rank guards,
whether ``print`` is silenced, and which functions nothing calls.
"""

from __future__ import annotations

import ast
import os
import re
from functools import lru_cache
from pathlib import Path
from typing import Callable, Iterable

from troubleshooter.scan.guards import RankLogic, dotted, last, mark_methods, walk
from troubleshooter.scan.guards import const as _const
from troubleshooter.scan.model import is_main_block
from troubleshooter.scan.patterns import Patterns
from troubleshooter.scan.source import imports_in_bytes, parse_python

try:  # the regular-expression parser (read to derive the words a rank-name pattern needs)
    from re import _constants as _re_constants, _parser as _re_parser
except ImportError:  # Python < 3.11
    import sre_constants as _re_constants
    import sre_parse as _re_parser

_NAME, _ATTRIBUTE, _CALL, _CONSTANT, _LOAD = ast.Name, ast.Attribute, ast.Call, ast.Constant, ast.Load
# Statement kinds Project.add summarises besides names, attributes, calls and strings.
_SUMMARISED = frozenset({ast.Assign, ast.AnnAssign, ast.FunctionDef, ast.AsyncFunctionDef, ast.If, ast.IfExp,
                         ast.ClassDef, ast.Import, ast.ImportFrom})
# Node kinds ModuleIndex reads from a project's parts (calls, assignments, imports, definitions, conditionals).
_PART_KINDS = frozenset({ast.Call, ast.Assign, ast.AnnAssign, ast.Import, ast.ImportFrom, ast.FunctionDef,
                         ast.AsyncFunctionDef, ast.ClassDef, ast.IfExp})
# Statements holding other statements, and the fields that hold them (imports may sit inside any of them).
_COMPOUND = {kind: fields for kind, fields in (
    (ast.If, ("body", "orelse")), (ast.For, ("body", "orelse")), (ast.AsyncFor, ("body", "orelse")),
    (ast.While, ("body", "orelse")), (ast.With, ("body",)), (ast.AsyncWith, ("body",)),
    (ast.Try, ("body", "handlers", "orelse", "finalbody")), (ast.ExceptHandler, ("body",)),
    (ast.FunctionDef, ("body",)), (ast.AsyncFunctionDef, ("body",)), (ast.ClassDef, ("body",)),
    (getattr(ast, "TryStar", None), ("body", "handlers", "orelse", "finalbody"))) if kind is not None}
HELPER_DEPTH = 2  # local imports followed from a scanned file (imports of imports ...)
# Words of the checks Project.add makes itself rather than through a pattern list: ``builtins.print = ...``,
# ``sys.stdout = ...``, ``print(..., force=True)``, ``os.environ["CUDA_VISIBLE_DEVICES"] = ...``, an entry point.
_CODE_WORDS = (b"builtins", b"__builtin__", b"stdout", b"force=", b"CUDA_VISIBLE_DEVICES", b"__main__", b"IterableDataset")
# Pattern lists of names the summary reads (their last segments are the words to look for).
_NAME_KEYS = ("ddp_wrappers", "init_process_group", "distributed_samplers", "print_silencers", "spawners",
              "rank_names", "main_process_names", "rank_zero_decorators")
# Pattern lists of regular expressions the summary reads (rank and main-process names).
_REGEX_KEYS = ("rank_name_patterns", "main_process_patterns")
_EXPANSION_LIMIT = 512  # strings a regular expression may be expanded to before it is given up on


class Project:
    """Knowledge shared by the modules of one scan."""

    def __init__(self, patterns: Patterns):
        self.P = patterns
        self.guards = RankLogic(patterns)
        self.print_silenced = False
        self.raw_distributed = False  # some module starts torch.distributed / wraps in DDP itself
        self.frameworks: set[str] = set()  # frameworks some module uses to run distributed
        self.referenced: set[str] = set()  # names some module calls or reads (outside helper main blocks)
        self._own_names: dict[str, set[str]] = {}  # module -> bare names (and strings) it reads outside its main block
        self._attr_refs: set[str] = set()  # ``module.name`` read outside a main block (``utils.save(...)``), strings
        self._main_attrs: dict[str, set[str]] = {}  # module -> ``module.name`` read in its main block
        self._imported: set[str] = set()  # names some module imports by name (``from utils import save``)
        self._star_import = False  # ``from m import *`` somewhere: any bare name may be another module's function
        self._framework_classes: dict[str, str] = {}  # class -> framework its base class starts (MyTrainer(Trainer))
        self.classes: set[str] = set()  # classes defined in the project's modules
        self.iterable_classes: set[str] = set()  # those based on an iterable-style dataset (they yield their own data)
        self._main_refs: dict[str, set[str]] = {}  # module -> names read in its ``if __name__ == "__main__"``
        self._helpers: set[str] = set()  # modules another module of the project imports
        self.local_modules: set[str] = set()  # dotted names of imported modules that are project files
        self.logging_by_rank = False  # some module sets logging up per rank (only rank 0 writes to the console)
        self.one_visible_gpu = False  # some module sets CUDA_VISIBLE_DEVICES itself (one GPU per process)
        self.has_entry = False  # some module runs something (``if __name__ == "__main__"`` or top-level calls)
        self.declined: set[str] = set()  # finding ids a framework was told not to handle (replace_sampler_ddp=False)
        self.sharded_results: set[str] = set()  # functions whose result some module hands to a loader sharder
        self._seen: set[str] = set()
        self._parts: dict[int, list[ast.AST]] = {}  # id(tree) -> the nodes the index needs (walked once, reused)
        self.files = FileLookups()  # this scan's file-system lookups (cached while the scan runs)
        self.module_memo: dict[tuple[str, str], object] = {}  # (query, file) -> a checker's answer, once per scan

    # ---- building ---------------------------------------------------------------------------
    def relevant(self, data: bytes) -> bool:
        """Cheap test on a module's bytes: can it tell the project anything (set-up, a framework, a rank guard,
        print silencing, an entry point)? A module that cannot (a layer definition) is not summarised."""
        words, folded = _relevance_words(self.P)
        if words is None:
            return True
        return words.any_in(data) or bool(folded) and any(word in data.lower() for word in folded)

    def add(self, path: str, tree: ast.Module, keep_nodes: bool = True) -> list[str]:
        """Summarise one module; return the paths of the local modules it imports (not yet added).
        ``keep_nodes``: remember the nodes the index built next needs (not for a helper that is only read)."""
        key = self.files.key(path, tree)
        if key in self._seen:
            return []
        self._seen.add(key)
        was_raw = self.raw_distributed
        aliases: dict[str, str] = {}
        imported: list[tuple[str, int]] = []
        assigns, defs, calls, ifs = [], [], [], []
        main_refs = self._main_refs.setdefault(key, set())
        own_names = self._own_names.setdefault(key, set())
        main_attrs = self._main_attrs.setdefault(key, set())
        attr_heads: list[tuple[str, str, bool]] = []  # (head name, attribute, in the main block)
        imports, others = [], []  # import statements; conditional expressions and class definitions
        for stmt in tree.body:
            in_main = is_main_block(stmt)
            refs = main_refs if in_main else self.referenced
            names = main_refs if in_main else own_names
            add_ref, add_name = refs.add, names.add
            for node in walk(stmt, operators=False):
                kind = node.__class__
                if kind is _NAME:
                    if node.ctx.__class__ is _LOAD:
                        add_ref(node.id)
                        add_name(node.id)
                elif kind is _ATTRIBUTE:
                    if node.ctx.__class__ is _LOAD:
                        add_ref(node.attr)
                        head = node.value
                        while head.__class__ is _ATTRIBUTE:
                            head = head.value
                        if head.__class__ is _NAME:
                            attr_heads.append((head.id, node.attr, in_main))
                    elif node.attr == "print" and dotted(node.value) in ("builtins", "__builtin__", "__builtins__"):
                        self.print_silenced = True  # builtins.print = a rank-aware print
                    elif node.attr == "stdout" and dotted(node.value) == "sys":
                        self.print_silenced = True  # sys.stdout = open(os.devnull, "w") off rank 0
                elif kind is _CALL:
                    self._call(node, aliases)
                    calls.append(node)
                elif kind is _CONSTANT:
                    if node.value.__class__ is str and node.value.isidentifier():
                        add_ref(node.value)  # getattr(obj, "name"), callbacks named in a config
                        self._attr_refs.add(node.value)  # a name in a string may be resolved in any module
                elif kind not in _SUMMARISED:
                    continue
                elif kind is ast.Assign or kind is ast.AnnAssign:
                    assigns.append(node)
                    for target in node.targets if kind is ast.Assign else (node.target,):
                        if target.__class__ is ast.Subscript and _const(target.slice) == "CUDA_VISIBLE_DEVICES":
                            self.one_visible_gpu = True
                elif kind is ast.FunctionDef or kind is ast.AsyncFunctionDef:
                    defs.append(node)
                elif kind is ast.If:
                    ifs.append(node)
                elif kind is ast.IfExp:
                    others.append(node)
                elif kind is ast.ClassDef:
                    others.append(node)
                    self.classes.add(node.name)
                    if any("Iterable" in (dotted(base) or "") for base in node.bases):
                        self.iterable_classes.add(node.name)
                    mark_methods(node)
                    for base in node.bases:  # class MyTrainer(SFTTrainer): building one starts the framework
                        text = dotted(base) or ""
                        head, dot, rest = text.partition(".")
                        qual = aliases.get(head, head) + dot + rest if head else ""
                        framework = _framework_of(self.P, qual)
                        if framework:
                            aliases[node.name] = qual
                            self._framework_classes[node.name] = framework
                elif kind is ast.Import:
                    imports.append(node)
                    for alias in node.names:
                        head = alias.name.partition(".")[0]
                        aliases[alias.asname or head] = alias.name if alias.asname else head
                        imported.append((alias.name, 0))
                elif kind is ast.ImportFrom:
                    imports.append(node)
                    for alias in node.names:
                        self._imported.add(alias.name)
                        self._star_import |= alias.name == "*"
                        if node.module and not node.level:
                            aliases[alias.asname or alias.name] = f"{node.module}.{alias.name}"
                        imported.append((f"{node.module}.{alias.name}" if node.module else alias.name, node.level))
                    if node.module:
                        imported.append((node.module, node.level))
        if keep_nodes:  # what ModuleIndex._collect_imports reads, in walk order within each kind
            self._parts[id(tree)] = [*calls, *assigns, *imports, *defs, *others]
        for head, attr, in_main in attr_heads:  # ``utils.save_checkpoint``: a module's function, not a method
            if head in aliases:
                (main_attrs if in_main else self._attr_refs).add(attr)
        self.has_entry |= any(_is_entry(stmt) for stmt in tree.body)
        vendored = vendored_framework(self.P, [m for m, _ in imported],
                                      [n.name for n in others if n.__class__ is ast.ClassDef])
        if vendored:  # a copy of the framework's own entry: its DDP wrap is the framework's, not the project's
            self.raw_distributed = was_raw
            self.frameworks.add(vendored)
        self._start_subclassed_frameworks()
        self.frameworks |= _annotated_frameworks(self.P, defs, aliases)
        self.guards.learn(assigns, defs, calls, ifs)
        self._learn_sharded_results(assigns, calls)
        self.logging_by_rank = self.logging_by_rank or any(self._sets_logging_up_by_rank(node) for node in ifs)
        if not path:
            return []
        found = self.files.resolve(path, imported)
        helpers = [p for _, p in found]
        self.local_modules.update(module for module, _ in found)
        self._helpers.update(self.files.real(p) for p in helpers)
        return [p for p in helpers if self.files.real(p) not in self._seen]

    def distributed_path(self, modules: list[tuple[str, bytes, ast.Module | None]],
                         tree_of: Callable[[str], ast.Module | SyntaxError] | None = None) -> set[str] | None:
        """The scanned modules that run in a distributed process, found before any full walk: those whose bytes may
        start distributed training (set-up, a DDP wrap, a sampler, a framework), those importing one (a scanned
        module or a local helper beside them, directly or through a package ``__init__``), and everything these
        import. A standalone tool next to them (a checkpoint
        converter, a plotting script) is not: it is judged on its own, as if scanned alone (and costs no summary).
        None when no module may start distributed: then every module is summarised, as for any project.

        ``modules``: (path, bytes, tree) of the scan's modules that parse. A module given without its tree (None: not
        parsed yet) has its imports read from its bytes (:func:`imports_in_bytes`: all of them, maybe a few more), and
        ``tree_of(path)`` is asked for its tree (a SyntaxError when it does not parse) only where one of those extra
        imports could change the answer; the answer is the one its tree gives."""
        signs = _start_signs(self.P)
        graph = _ImportGraph(self.files, tree_of)
        starts: set[str] = set()
        for path, data, tree in modules:
            starting = _starts(data, signs)
            if starting and tree is None:
                tree = graph.parsed(path)  # one that does not parse starts nothing
            key = graph.add(path, data, tree)
            if starting and key is not None:
                starts.add(key)
        imports = graph.imports
        scanned = set(imports)
        for key in [key for key, targets in imports.items() if key in graph.unsure and not targets <= scanned]:
            graph.exact(key)  # it may import a file outside the scan (read below): only its own imports count
        for target in {t for targets in imports.values() for t in targets} - imports.keys():
            try:  # a local helper the scan did not name (read later by add_source) may start it too
                data = Path(target).read_bytes()
            except OSError:
                continue
            if _starts(data, signs):
                starts.add(target)
        if not starts:
            return None

        def imports_start(targets: set[str]) -> bool:
            return bool(targets & starts) or any(t.endswith("__init__.py") and imports.get(t, set()) & starts
                                                 for t in targets)

        # a package __init__ first: whether it imports a starting module decides for the modules importing it
        for key in [key for key in graph.unsure if key.endswith("__init__.py") and imports[key] & starts]:
            graph.exact(key)
        for key in [key for key in graph.unsure if imports_start(imports[key])]:
            graph.exact(key)
        path_set = set(starts) | {key for key, targets in imports.items() if imports_start(targets)}
        todo, waiting = list(path_set), []
        while todo or waiting:  # what a distributed module imports runs in the same processes
            if not todo:  # a module read from its bytes: its own imports are needed only if one is not on the path
                key = waiting.pop()
                if key in graph.unsure:
                    if imports[key] <= path_set:
                        continue
                    graph.exact(key)
                todo.append(key)
                continue
            key = todo.pop()
            if key in graph.unsure:
                waiting.append(key)
                continue
            for target in imports.get(key, ()):
                if target not in path_set:
                    path_set.add(target)
                    todo.append(target)
        return path_set

    @classmethod
    def of_index(cls, index) -> "Project":
        """The project of a file scanned alone, read off its index (no second walk over the tree)."""
        project = cls(index.P)
        project.guards = index.guards
        project.referenced = {last(n) for n in index.loaded} | {s.method for s in index.calls} | {
            s for s in index.strings if s.isidentifier()}
        project.classes = set(index.classes)
        project.has_entry = any(_is_entry(stmt) for stmt in index.tree.body)
        subclasses = {name: index.qual(base) for name, cls in index.classes.items() for base in cls.bases
                      if _framework_of(project.P, index.qual(base))}
        for site in index.calls:
            project._call(site.node, index.aliases, subclasses.get(site.name, site.name))
        defs = [f.node for infos in index.functions.values() for f in infos]
        project.frameworks |= _annotated_frameworks(project.P, defs, index.aliases)
        vendored = vendored_framework_of(index)
        if vendored:  # the file is a copy of the framework's entry (see ``add``)
            project.raw_distributed = False
            project.frameworks.add(vendored)
        return project

    def _call(self, node: ast.Call, aliases: dict[str, str], qual: str | None = None) -> None:
        P = self.P
        text = dotted(node.func) or ""
        if qual is None:
            head, dot, rest = text.partition(".")
            qual = aliases.get(head, head) + dot + rest if head else ""
        name = last(text)
        if name in P.print_silencers or (name == "print" and any(k.arg == "force" for k in node.keywords)):
            self.print_silenced = True
        if "log" in name.lower() and name not in P.logging_methods and (
                any(k.arg and "rank" in k.arg.lower() for k in node.keywords)
                or any(self.guards.is_rank_expr(a) for a in [*node.args, *(k.value for k in node.keywords)])):
            self.logging_by_rank = True  # setup_logger(output, distributed_rank=rank): per-rank log set-up
        if qual in P.ddp_wrappers or qual in P.init_process_group or qual in P.distributed_samplers:
            self.raw_distributed = True
        framework = _framework_of(P, qual)
        if framework:
            self.frameworks.add(framework)
            self.declined |= {ident for k in node.keywords if k.arg and _const(k.value, default=...) is False
                              for ident in P.framework_opt_outs.get(k.arg, ())}

    def _learn_sharded_results(self, assigns: list[ast.AST], calls: list[ast.Call]) -> None:
        """Functions whose result a module hands to a framework's loader sharder (``loader = build_loader(cfg)``, then
        ``accelerator.prepare(model, loader)``; ``fabric.setup_dataloaders(make_loader())``): the loader they build,
        in this module or another, is sharded there."""
        sharders = [c for c in calls if c.func.__class__ is _ATTRIBUTE and c.func.attr in self.P.loader_sharders]
        if not sharders:
            return
        made: dict[str, set[str]] = {}  # name -> the functions whose result (or one of whose results) it holds
        for node in assigns:
            if node.value.__class__ is not _CALL:
                continue
            callee = last(dotted(node.value.func))
            for target in node.targets if node.__class__ is ast.Assign else [node.target]:
                for element in target.elts if target.__class__ in (ast.Tuple, ast.List) else [target]:
                    if dotted(element) and callee and callee not in self.P.loader_sharders:
                        made.setdefault(dotted(element), set()).add(callee)
        for call in sharders:
            for arg in [*call.args, *(k.value for k in call.keywords)]:
                if arg.__class__ is _CALL and dotted(arg.func):
                    self.sharded_results.add(last(dotted(arg.func)))
                else:
                    self.sharded_results.update(made.get(dotted(arg) or "", ()))

    def _start_subclassed_frameworks(self) -> None:
        """A project class built on a framework's entry class (``class LLaVATrainer(Trainer)`` in one module,
        ``LLaVATrainer(...)`` in another; ``TrainingArguments(transformers.TrainingArguments)`` handed to a
        parser) starts that framework once some module uses it."""
        for name, framework in self._framework_classes.items():
            if framework not in self.frameworks and (
                    name in self.referenced or any(name in refs for refs in self._main_refs.values())):
                self.frameworks.add(framework)

    def _sets_logging_up_by_rank(self, node: ast.If) -> bool:
        """``if is_main_process(): handler = StreamHandler(...); handler.setLevel(...)``, ``if rank == 0:
        logger.setLevel(level)``: which ranks' logs reach the console is decided by rank (dinov2, mmf)."""
        return self.guards.classify(node.test) is not None and any(
            isinstance(sub, ast.Call) and _called_name(sub) in self.P.log_output_setup
            for stmt in [*node.body, *node.orelse] for sub in walk(stmt))

    def add_source(self, path: str, depth: int = HELPER_DEPTH) -> None:
        """Summarise a local helper module found on disk (and, ``depth`` levels down, its own imports). A package's
        ``__init__.py`` that only re-exports its submodules is a door, not a level: what it imports is followed at
        the depth it was reached at (``from prismatic.training import get_train_strategy``)."""
        if self.files.key(path) in self._seen:
            return
        try:
            data = Path(path).read_bytes()
            door = os.path.basename(path) == "__init__.py" and b"import" in data
            if not door and not self.relevant(data):
                return
            tree = parse_python(data, path)
        except (OSError, SyntaxError, ValueError, RecursionError, MemoryError):
            return
        door = door and _reexports_only(tree)
        if door or self.relevant(data):
            for helper in self.add(path, tree, keep_nodes=False):
                if door or depth > 1:
                    self.add_source(str(helper), depth if door else depth - 1)

    # ---- queries ----------------------------------------------------------------------------
    def rank_names(self) -> tuple[set[str], set[str], set[str], set[str], set[str], dict[str, tuple[str, str]],
                                  set[str]]:
        """(names holding a rank, names true on the main process only, rank-0 decorators, objects switched off on
        some ranks, flags true off the main process, other flags with one side known, values that exist on the main
        process only) learnt across the project."""
        g = self.guards
        return (g.rank_vars, g.main_vars, g.rank0_decorators, g.rank_switched, g.off_main_vars, g.flag_sides,
                g.resolve_main_only())

    def handled_by_framework(self, finding_id: str) -> bool:
        """True when every framework the project runs through takes care of ``finding_id`` itself."""
        return bool(self.frameworks) and finding_id not in self.declined and all(
            finding_id in self.P.frameworks[f]["handles"] for f in self.frameworks)

    def adopt(self, tree: ast.Module, expanded: ast.Module, added: list[ast.stmt]) -> None:
        """The parts of ``expanded`` (``tree`` with the statements ``added``, inlined from local helpers): those of
        ``tree`` and the added statements' own (walked alone, not the whole module again)."""
        parts = self._parts.get(id(tree))
        if parts is not None:
            nodes = [node for stmt in added for node in walk(stmt, operators=False)]
            self._parts[id(expanded)] = parts + [node for node in nodes if node.__class__ in _PART_KINDS]
            # what the inlined statements bind is learnt too: a helper's local renamed where it is inlined
            # (``rank`` -> ``rank_setup``, the caller has its own ``rank``) still holds a rank
            self.guards.learn([n for n in nodes if n.__class__ is ast.Assign or n.__class__ is ast.AnnAssign], [],
                              [n for n in nodes if n.__class__ is _CALL], main_only=False)  # the helper's: known

    def parts(self, tree: ast.Module) -> list[ast.AST] | None:
        """The calls, assignments, imports, definitions and conditional expressions of a module this project has
        summarised (found in its one walk), else None."""
        return self._parts.get(id(tree))

    def key(self, path: str) -> str:
        """The key of a module file (its resolved path)."""
        return self.files.key(path)

    def knows(self, path: str) -> bool:
        """True for a module this project has summarised."""
        return self.files.key(path) in self._own_names

    def is_helper(self, path: str) -> bool:
        """True for a module another module of the project imports (its ``__main__`` block does not run)."""
        return bool(path) and self.files.real(path) in self._helpers

    def is_called(self, name: str, module: str | None = None) -> bool:
        """False only for a function nothing in the project calls or names (when the project runs something).
        ``module``: the path of the module defining ``name`` at its top level. Such a function is reached by its
        bare name only from its own module or from one that imports that name; a namesake defined and called in
        another module (``save_checkpoint`` in both ``main_accelerate.py`` and ``utils.py``) does not reach it."""
        if not self.has_entry or self.P.matches("implicit_callees", name):
            return True
        key = self.files.key(module) if module else None
        if key is None or key not in self._own_names or self._star_import:
            return name in self.referenced or any(
                name in refs for k, refs in self._main_refs.items() if k not in self._helpers)
        own_main = key not in self._helpers and name in self._main_refs.get(key, ())
        return (name in self._own_names[key] or name in self._attr_refs or name in self._imported or own_main
                or any(name in attrs for k, attrs in self._main_attrs.items() if k not in self._helpers))


class _ImportGraph:
    """The local files each module of a scan imports (resolved paths): read from the module's tree, or, for one not
    parsed yet, from its bytes (``unsure``: every import, maybe a few more) until :meth:`exact` reads its tree."""

    def __init__(self, files: "FileLookups", tree_of: Callable[[str], ast.Module | SyntaxError] | None):
        self.files = files
        self.tree_of = tree_of
        self.imports: dict[str, set[str]] = {}  # module key -> the local files it imports
        self.unsure: dict[str, tuple[str, bytes]] = {}  # module key -> (path, bytes): imports read from the bytes

    def parsed(self, path: str) -> ast.Module | SyntaxError:
        """The tree of a module given without one."""
        if self.tree_of is None:
            raise ValueError(f"{path}: a module without its tree needs tree_of")
        return self.tree_of(path)

    def add(self, path: str, data: bytes, tree: ast.Module | SyntaxError | None) -> str | None:
        """Record a module's imports; its key, or None for a module that does not parse (it is left out)."""
        found = imports_in_bytes(data) if tree is None else None
        if tree is None and found is None:  # bytes this reading is unsure of
            tree = self.parsed(path)
        if isinstance(tree, SyntaxError):
            return None
        key = self.files.key(path, tree)
        if tree is None:
            self.unsure[key] = (path, data)
        else:
            self.unsure.pop(key, None)
            found = _statement_imports(tree, data)
        self.imports[key] = {self.files.real(p) for _, p in self.files.resolve(path, found)}
        return key

    def exact(self, key: str) -> None:
        """Read an unsure module's imports from its tree (the module is left out when it does not parse)."""
        path, data = self.unsure.pop(key)
        tree = self.parsed(path)
        if isinstance(tree, SyntaxError):
            del self.imports[key]
        else:
            self.imports[key] = {self.files.real(p) for _, p in self.files.resolve(path, _statement_imports(tree, data))}


def _reexports_only(tree: ast.Module) -> bool:
    """The module only imports (and may name ``__all__`` or carry a docstring)."""
    return all(isinstance(stmt, (ast.Import, ast.ImportFrom)) or (
        isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant)) or (
        isinstance(stmt, (ast.Assign, ast.AugAssign)) and dotted(getattr(stmt, "target", None) or stmt.targets[0])
        == "__all__") for stmt in tree.body)


@lru_cache(maxsize=8)
def _start_signs(P: Patterns) -> tuple[tuple[bytes, ...], ...]:
    """Word sets a module must contain (all of one set, outside comment lines) to start distributed work itself,
    from the patterns: ``DistributedDataParallel``; ``transformers`` with ``Trainer`` (a module that only loads
    a model from the ``transformers`` package starts nothing); any ``lightning``. A set holding whenever a shorter
    one holds (``pytorch_lightning`` contains ``lightning``) is left out: it would only cost another search."""
    signs = {(last(q),) for q in (*P.ddp_wrappers, *P.init_process_group, *P.distributed_samplers)}
    for spec in P.frameworks.values():
        signs |= {(q.partition(".")[0], last(q)) for q in spec.get("entry", ())}
        signs |= {(q.partition(".")[0],) for q in spec.get("entry_prefixes", ())}
    kept: list[tuple[str, ...]] = []
    for sign in sorted((s for s in signs if all(s)), key=lambda s: (sum(map(len, s)), s)):
        if not any(all(any(word in mine for mine in sign) for word in other) for other in kept):
            kept.append(sign)
    return tuple(tuple(word.encode() for word in sign) for sign in sorted(kept))


def _starts(data: bytes, signs: tuple[tuple[bytes, ...], ...]) -> bool:
    """Some sign's words all occur outside comment lines (each word searched for once)."""
    seen: dict[bytes, bool] = {}
    for sign in signs:
        for word in sign:
            found = seen.get(word)
            if found is None:
                found = seen[word] = _in_code(data, word)
            if not found:
                break
        else:
            return True
    return False


@lru_cache(maxsize=8)
def _relevance_words(P: Patterns) -> tuple["WordSearch | None", tuple[bytes, ...]]:
    """What :meth:`Project.relevant` looks for, derived from the pattern files (a framework or a rank name added to
    the YAML needs no change here): (words any of which makes a module relevant, the same compared case-folded).
    They are the last segments of the names the summary reads, the strings every match of its regular expressions
    contains, the words of a distributed flag (``args.distributed``), imports of the frameworks' top-level packages
    (``from accelerate``, ``import ray``: the package name alone is also a part of other words, ``array``), and
    the words of the summary's own checks. None for the words: no pre-filter (some
    regular expression has no such strings)."""
    words = {last(name) for key in _NAME_KEYS for name in getattr(P, key)} | set(P.distributed_flag_words)
    packages = {q.partition(".")[0] for spec in P.frameworks.values() for q in
                (*spec.get("entry", ()), *spec.get("entry_prefixes", ()))}
    words |= {f"{statement} {package}" for package in packages - {""} for statement in ("import", "from")}
    folded: set[str] = set()
    for key in _REGEX_KEYS:
        for rx in getattr(P, key):
            found = _required_strings(rx)
            if found is None:
                return None, ()
            if rx.flags & re.IGNORECASE:
                folded.update(w.lower() for w in found)
            else:
                words.update(found)
    encoded = {w.encode() for w in words} | set(_CODE_WORDS)
    return WordSearch(_shortest(encoded)), _shortest({w.encode() for w in folded})


def _shortest(words: set[bytes]) -> tuple[bytes, ...]:
    """The words not containing another one (finding ``rank`` is enough; ``local_rank`` adds nothing)."""
    return tuple(sorted(w for w in words if not any(o != w and o in w for o in words)))


class WordSearch:
    """Tells whether any of many words occurs in a module's bytes in few passes over them: words sharing a lead
    (``is_main``, ``is_master``, ... ``import ray``, ``import trl``, ...) are searched for through it, one search
    for the lead and, where it occurs, one ``startswith`` of all of them; a word alone is searched for itself."""

    def __init__(self, words: Iterable[bytes]):
        groups: dict[bytes, list[bytes]] = {}
        for word in words:
            groups.setdefault(_lead(word), []).append(word)
        self._groups = tuple((lead, tuple(members)) if len(members) > 1 else (members[0], None)
                             for lead, members in groups.items())

    def any_in(self, data: bytes) -> bool:
        """True when some word occurs in ``data``."""
        for lead, members in self._groups:
            if members is None:
                if lead in data:
                    return True
                continue
            at = data.find(lead)
            while at != -1:
                if data.startswith(members, at):
                    return True
                at = data.find(lead, at + 1)
        return False


def _lead(word: bytes) -> bytes:
    """The start of a word up to its first separator after a letter (``is_`` of ``is_main``, ``import `` of
    ``import ray``), or the whole word."""
    letter = next((i for i, byte in enumerate(word) if chr(byte).isalpha()), len(word))
    ends = [at for at in (word.find(b"_", letter), word.find(b" ", letter)) if at != -1]
    return word[:min(ends) + 1] if ends else word


def _required_strings(rx: re.Pattern) -> set[str] | None:
    """Strings one of which every match of ``rx`` contains: all the strings it matches, when they are few
    (``^is_(local_)?(main|primary)$`` -> is_main, is_local_main, ...). None when there are too many or
    when it repeats or matches classes of characters (no such short list)."""
    try:
        found = _expand(_re_parser.parse(rx.pattern, rx.flags))
    except (re.error, TypeError, ValueError, AttributeError):
        return None
    return None if found is None or "" in found else found


def _expand(items) -> set[str] | None:
    """Every string a parsed regular expression matches, or None (a repeat, a character class, a scoped flag)."""
    out = {""}
    for op, arg in items:
        if op is _re_constants.LITERAL:
            options = {chr(arg)}
        elif op is _re_constants.AT:
            options = {""}  # an anchor matches no text
        elif op is _re_constants.SUBPATTERN:
            options = None if arg[1] or arg[2] else _expand(arg[-1])  # ``(?i:...)`` would need folding
        elif op is _re_constants.BRANCH:
            branches = [_expand(b) for b in arg[1]]
            options = None if any(b is None for b in branches) else set().union(*branches)
        elif op in (_re_constants.MAX_REPEAT, _re_constants.MIN_REPEAT) and arg[:2] in ((0, 1), (1, 1)):
            inner = _expand(arg[2])
            options = None if inner is None else inner | {""} if arg[0] == 0 else inner
        else:
            return None
        if options is None:
            return None
        out = {a + b for a in out for b in options}
        if len(out) > _EXPANSION_LIMIT:
            return None
    return out


def _in_code(data: bytes, word: bytes) -> bool:
    """``word`` occurs on a line that is not a comment (``# local rank for DistributedDataParallel`` starts nothing)."""
    at = data.find(word)
    while at != -1:
        if not data[data.rfind(b"\n", 0, at) + 1:at].lstrip().startswith(b"#"):
            return True
        at = data.find(word, at + 1)
    return False


def _statement_imports(tree: ast.Module, data: bytes | None = None) -> list[tuple[str, int]]:
    """(module, level) of every import statement, found through statement bodies only (no expression walk). With
    ``data``, the bytes the tree was parsed from, a module whose top-level import statements are as many as the times
    its bytes spell ``import`` is not searched further: every import statement spells it, so none is nested."""
    out: list[tuple[str, int]] = []
    todo = list(tree.body)
    if data is not None:
        top = [stmt for stmt in todo if stmt.__class__ is ast.Import or stmt.__class__ is ast.ImportFrom]
        if len(top) == data.count(b"import"):
            todo = top
    while todo:
        stmt = todo.pop()
        kind = stmt.__class__
        if kind is ast.Import:
            out += [(alias.name, 0) for alias in stmt.names]
        elif kind is ast.ImportFrom:
            out += [(f"{stmt.module}.{a.name}" if stmt.module else a.name, stmt.level) for a in stmt.names]
            if stmt.module:
                out.append((stmt.module, stmt.level))
        elif kind in _COMPOUND:
            for field in _COMPOUND[kind]:
                todo.extend(getattr(stmt, field))
    return out


def _called_name(call: ast.Call) -> str:
    """The last part of what a call calls: ``setLevel`` in ``logging.getLogger().setLevel(...)``."""
    return call.func.attr if isinstance(call.func, ast.Attribute) else last(dotted(call.func))


def _is_entry(stmt: ast.stmt) -> bool:
    return is_main_block(stmt) or isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call)


def framework_entry_in(index) -> bool:
    """The module itself starts a framework: it calls one's entry (``Accelerator()``, ``Trainer(...)``,
    ``TrainingArguments``), annotates a parameter with one's entry class, or is a copy of one's entry class."""
    P = index.P
    if any(_framework_of(P, site.name) for site in index.calls if site.name) or vendored_framework_of(index):
        return True
    defs = [f.node for infos in index.functions.values() for f in infos]
    return bool(_annotated_frameworks(P, defs, index.aliases))


def vendored_framework(P: Patterns, imported, class_names: Iterable[str]) -> str | None:
    """The framework whose entry class a module holds a copy of, if any: it defines a class named like one of the
    framework's entry classes and imports the framework's own internals (its ``vendored_from`` modules), as
    ChatGLM's ``ptuning/trainer.py`` copies transformers' Trainer. Such a module does what the framework does.
    ``imported``: the module's imported names, or a function returning them (called only when a class name fits)."""
    candidates = [framework for framework, spec in P.frameworks.items() if spec.get("vendored_from")
                  and any(name in {last(q) for q in spec["entry"]} for name in class_names)]
    if not candidates:
        return None
    imported = list(imported() if callable(imported) else imported)
    tails = {q.rpartition(".")[2] for q in imported} | {q.rpartition(".")[0].rpartition(".")[2] for q in imported}
    for framework in candidates:
        # the framework's module itself, or a copy beside it (``from .trainer_pt_utils import``, ``from
        # trainer_pt_utils import``): the module's own name, whatever package holds it
        if any(m.rpartition(".")[2] in tails for m in P.frameworks[framework]["vendored_from"]):
            return framework
    return None


def vendored_framework_of(index) -> str | None:
    """The framework whose own entry class the module is a copy of (:func:`vendored_framework`), if any."""
    if not index.classes:
        return None
    return vendored_framework(index.P, lambda: [m for m, _ in _statement_imports(index.tree)], index.classes)


def _annotated_frameworks(P: Patterns, defs: list, aliases: dict[str, str]) -> set[str]:
    """Frameworks whose entry class annotates a parameter of the module's functions (``def update(policy,
    accelerator: "Accelerator")`` with ``from accelerate import Accelerator``, often under ``TYPE_CHECKING``): the
    module trains through an object of that framework built elsewhere (a factory, a config)."""
    found = set()
    for node in defs:
        args = node.args
        for arg in [*args.posonlyargs, *args.args, *args.kwonlyargs]:
            note = arg.annotation
            text = note.value if isinstance(note, ast.Constant) and isinstance(note.value, str) else dotted(note)
            if text:
                head, dot, rest = text.partition(".")
                framework = _framework_of(P, aliases.get(head, head) + dot + rest)
                if framework:
                    found.add(framework)
    return found


@lru_cache(maxsize=65536)
def _framework_of(P: Patterns, qual: str) -> str | None:
    """The framework a qualified name starts (``transformers.Trainer`` -> hf-trainer), if any."""
    for framework, spec in P.frameworks.items():
        if qual in spec["entry"] or any(qual.startswith(m) for m in spec["entry_prefixes"]):
            return framework
    return None


def _package_root(folder: str, head: str) -> list[str]:
    """The folder above the package ``head`` that ``folder`` lies in (``pkg/apps/trainer`` importing
    ``pkg.apps.utils``): a module's absolute imports of its own package resolve from there, however deep it sits."""
    above = folder.split(os.sep)[:-2]  # the folder, its parent and grandparent are looked up from already
    if head not in above:
        return []
    at = len(above) - 1 - above[::-1].index(head)
    return [os.sep.join(above[:at]) or os.sep]


class FileLookups:
    """The file-system lookups of one scan, each made once: the files of a folder import the same modules, and a
    module's key (its resolved path) is asked for again and again. Each Project has its own (one per scan)."""

    def __init__(self):
        self._real: dict[str, str] = {}
        self._found: dict[tuple[str, str, int], str | None] = {}
        self._folders: dict[str, str] = {}  # file -> its folder
        self._is_file: dict[str, bool] = {}
        self._is_dir: dict[str, bool] = {}
        self._parents: dict[str, list[str]] = {}  # folder -> it and its two parents
        self._heads: dict[tuple[str, str], bool] = {}  # (folder, top-level name) -> a package or module is there
        self._listings: dict[str, tuple[frozenset[str], frozenset[str]] | None] = {}  # folder -> (folders, files)

    def key(self, path: str, tree: ast.Module | None = None) -> str:
        """The key of a module: its resolved path, or the tree's identity for a module without a file."""
        return self.real(path) if path else f"<{id(tree)}>"

    def real(self, path: str | Path) -> str:
        """The resolved absolute path (symbolic links followed): one module, one key."""
        path = str(path)
        found = self._real.get(path)
        if found is None:
            folder, name = os.path.split(path)
            if folder and name not in ("", ".", "..") and not os.path.islink(path):
                found = os.path.join(self.real(folder), name)  # the folder's links resolved once for all its files
            else:
                found = os.path.realpath(path)
            self._real[path] = found
        return found

    def resolve(self, path: str, imported: list[tuple[str, int]]) -> list[tuple[str, str]]:
        """(module, file) of the local modules named by imports (relative to the file's folder and its parents)."""
        folder = self.folder(str(path))
        out: list[tuple[str, str]] = []
        seen = {str(path)}
        for module, level in imported:
            if not module:
                continue
            at = (folder, module, level)
            if at not in self._found:
                self._found[at] = self._find(*at)
            found = self._found[at]
            if found is not None and found not in seen:
                seen.add(found)
                out.append((module, found))
        return out

    def folder(self, path: str) -> str:
        """The folder of a file, absolute when the path is relative (``train.py`` scanned from its own folder
        imports its neighbours, and ``tools/train.py`` the packages beside ``tools``)."""
        folder = self._folders.get(path)
        if folder is None:
            folder = self._folders[path] = os.path.dirname(path if os.path.isabs(path) else os.path.abspath(path))
        return folder

    def find(self, path: str, module: str, level: int) -> str | None:
        """The local file an import of ``module`` (``level`` dots) in the file ``path`` names, if any."""
        folder = self.folder(path)
        at = (folder, module, level)
        found = self._found.get(at, False)
        if found is False:
            found = self._found[at] = self._find(*at)
        return found if found != path else None

    def _find(self, folder: str, module: str, level: int) -> str | None:
        """The file an import of ``module`` (``level`` dots) from a file in ``folder`` names, if it is local."""
        parts = module.split(".")
        for base in self._bases(folder, level) + (_package_root(folder, parts[0]) if not level else []):
            if self._holds(base, parts[0]):
                candidate = os.path.join(base, *parts)
                return next((f for f in (candidate + ".py", os.path.join(candidate, "__init__.py")) if self._file(f)),
                            None)
        return None

    def _bases(self, folder: str, level: int) -> list[str]:
        """The folders an import is looked up from: the one ``level`` dots name, else the file's folder and its
        two parents."""
        parents = self._parents.get(folder)
        if parents is None:
            parents = self._parents[folder] = [folder, os.path.dirname(folder)]
            parents.append(os.path.dirname(parents[-1]))
        return [parents[min(level - 1, 2)]] if level else parents

    def _holds(self, base: str, head: str) -> bool:
        """``base`` is a folder holding a package or module ``head`` (asked once per folder and top-level name:
        ``torch``, ``torch.nn`` and ``torch.nn.functional`` are one question)."""
        at = (base, head)
        found = self._heads.get(at)
        if found is None:
            listed = self._listing(base)
            found = self._heads[at] = head in listed[0] or head + ".py" in listed[1] if listed is not None else \
                self._dir(base) and (self._dir(os.path.join(base, head)) or self._file(os.path.join(base, head + ".py")))
        return found

    def _listing(self, folder: str) -> tuple[frozenset[str], frozenset[str]] | None:
        """(sub-folders, files) of a folder, read once (one directory listing answers every name asked about it);
        None when it cannot be listed (then each name is looked up on its own)."""
        if folder in self._listings:
            return self._listings[folder]
        try:
            with os.scandir(folder) as entries:
                dirs, files = set(), set()
                for entry in entries:
                    try:
                        if entry.is_dir():
                            dirs.add(entry.name)
                        elif entry.is_file():
                            files.add(entry.name)
                    except OSError:
                        continue
            found = frozenset(dirs), frozenset(files)
        except OSError:
            found = None
        self._listings[folder] = found
        return found

    def _file(self, path: str) -> bool:
        found = self._is_file.get(path)
        if found is None:
            found = self._is_file[path] = os.path.isfile(path)
        return found

    def is_dir(self, path: str) -> bool:
        """``path`` is a folder (asked once per path)."""
        return self._dir(path)

    def _dir(self, path: str) -> bool:
        found = self._is_dir.get(path)
        if found is None:
            found = self._is_dir[path] = os.path.isdir(path)
        return found
