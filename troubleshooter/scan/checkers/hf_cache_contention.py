"""hf-cache-contention: every rank downloads / locks the same Hugging Face cache (or dataset directory) at start-up."""

from __future__ import annotations

import ast
import os

from troubleshooter.scan.checkers import Checker, Hit
from troubleshooter.scan.checkers._common import derivation
from troubleshooter.scan.checkers._switches import switch_value
from troubleshooter.scan.model import const, dotted, is_main_block, last, source


class HfCacheContentionChecker(Checker):
    """from_pretrained / load_dataset (or a dataset fetcher: ``sklearn.datasets.fetch_*``), or a ``datasets``
    ``.map``/``.filter`` that writes the dataset cache, on every rank, with no rank-0-first guard or barrier
    before it."""

    id = "hf-cache-contention"

    def check_handled(self, m):
        """Under the HF Trainer or Accelerate: they take care of their own loading, not of the user's
        preprocessing (``dataset.map`` before ``Trainer(...)``), which still runs on every rank."""
        if not any(s.rank_conditional for s in m.calls_to(m.P.hf_cache_loaders)):
            yield from _as_evidence_allows(m, _one_per_cause(m, self._cache_writes(m)))

    def check(self, m):
        yield from _as_evidence_allows(m, self._check(m))

    def _check(self, m):
        P = m.P
        sites = m.calls_to(P.hf_cache_loaders)
        downloads = [s for s in m.calls if P.matches("dataset_fetchers", s.name) or s.name in P.url_fetchers]
        if any(s.rank_conditional for s in sites + downloads):
            return  # rank 0 fetches first somewhere: the pattern is known to this script
        for site in downloads:
            if (any(last(w) in P.rank_zero_first_contexts for w in site.ctx.withs) or self._barrier_before(m, site)
                    or m.in_spawning_parent(site)):
                continue
            if site.name not in P.url_fetchers:
                yield Hit(site.line, f"{site.method}(...) downloads the dataset on every rank at once: all ranks write "
                                     "the same files in the same directory; let rank 0 fetch first, then barrier",
                          {"variable": site.method, "model": "the dataset"})
            elif not (site.rank0 or any(m.mentions_rank(root) for root in derivation(m, site.node, site))):
                url = site.node.args[0] if site.node.args else None
                yield Hit(site.line, f"{site.name}({source(url) if url is not None else '...'}, ...) downloads the "
                                     "file on every rank at once into the same local path: the ranks overwrite each "
                                     "other's partial file (a torn checkpoint, N times the traffic); let rank 0 fetch "
                                     "it, then barrier", {"variable": site.name, "model": "the file"})
        yield from _one_per_cause(m, self._hub_loads(m, sites))

    def _hub_loads(self, m, sites):
        """Every unguarded Hub load (from_pretrained / load_dataset of a Hub name) on every rank."""
        P = m.P
        project_classes = m.project.classes if m.project is not None else set(m.classes)
        for site in sites:
            if any(last(w) in P.rank_zero_first_contexts or last(w) in P.serialising_write_contexts
                   for w in site.ctx.withs):
                continue
            if last(site.recv) in project_classes or (site.func and site.func.name in P.hf_cache_loaders):
                continue  # the project's own from_pretrained (judged where it is called), or inside it
            if site.name.partition(".")[0] not in P.hub_packages:
                continue  # task.load_dataset(...): a method of the script's own objects, not the Hub's
            name = site.arg(0, "pretrained_model_name_or_path") or site.arg(0, "path")
            if self._loaded_model(m, name, site):
                name = site.arg(1, "model_id")  # ``PeftModel.from_pretrained(model, adapter_id)``: the adapter
            ident = const(name)
            if isinstance(ident, str) and _local_path(m, ident) or const(site.kw("local_files_only")) is True:
                continue
            if name is not None and P.matches("local_directory_names", last(dotted(name))) and not self._hub_id_bound(
                    m, name, site):
                continue  # from_pretrained(output_dir): a local folder, not the Hub
            if site.kw("data_files") is not None:
                continue  # load_dataset("json", data_files=path): the user's own files through a packaged builder
            streaming = site.kw("streaming")
            if streaming is not None and (const(streaming) is True or switch_value(m, streaming, site) is True):
                continue  # load_dataset(..., streaming=True): read over the network as it is iterated, no cache fill
            if self._barrier_before(m, site) or m.in_spawning_parent(site):
                continue  # rank 0 fetched first; or loaded once by the process that spawns the workers
            what = f"{site.recv}.{site.method}" if site.recv else site.method
            model = source(name) if name is not None else "the model"
            yield Hit(site.line, f"{what}({model}) runs on every rank at once: all ranks download into and lock the "
                                 "same cache; let rank 0 fetch first, then barrier",
                      {"variable": what, "model": model})

    def _cache_writes(self, m):
        """``ds.map(...)`` / ``ds.filter(...)`` of a ``datasets`` dataset on every rank at once."""
        P = m.P
        if not any(q.partition(".")[0] in P.hub_packages for q in m.aliases.values()):
            return
        for site in m.calls:
            if site.method not in P.dataset_cache_transforms or not self._is_dataset(m, site):
                continue
            if (site.rank_conditional or site.rank0 or m.rank0_first(site) or self._decorated_rank0_first(m, site)
                    or const(site.kw("keep_in_memory")) is True or self._barrier_before(m, site)
                    or m.in_spawning_parent(site)):
                continue
            what = f"{site.recv or 'dataset'}.{site.method}"
            yield Hit(site.line, f"{what}(...) runs on every rank at once: every process computes "
                                 "and writes the same datasets cache files; run it under main_process_first() so "
                                 "the others read the cache", {"variable": what,
                                                               "model": "the dataset cache"})

    @staticmethod
    def _is_dataset(m, site) -> bool:
        """A cache-backed ``datasets`` dataset: its receiver bound from a ``datasets`` loader, or a keyword only
        ``datasets`` takes; not an in-memory or streaming one (their maps write no cache file)."""
        recv = site.node.func.value if isinstance(site.node.func, ast.Attribute) else None
        made = m.value_call(recv, site.line, site.func) if recv is not None else None
        if made is not None and (made.method in m.P.in_memory_dataset_sources or const(made.kw("streaming")) is True):
            return False
        if any(k.arg in m.P.dataset_cache_keywords for k in site.node.keywords):
            return True
        return made is not None and made.method in m.P.dataset_sources and made.name.partition(".")[0] in m.P.hub_packages

    @staticmethod
    def _decorated_rank0_first(m, site) -> bool:
        """The enclosing function is decorated ``@state.main_process_first()`` (or another rank-0-first context)."""
        node = site.func.node if site.func else None
        names = [d.func if isinstance(d, ast.Call) else d for d in getattr(node, "decorator_list", ())]
        return any((n.attr if isinstance(n, ast.Attribute) else getattr(n, "id", "")) in m.P.rank_zero_first_contexts
                   for n in names)

    @staticmethod
    def _loaded_model(m, name, site) -> bool:
        """The first argument is a model object, not a name: bound from a loader call (``model =
        AutoModel.from_pretrained(...)``), or the call is PEFT's (``PeftModel.from_pretrained(model, model_id)``
        loads the adapter its second argument names)."""
        if site.name.partition(".")[0] in m.P.adapter_packages:
            return True
        made = m.value_call(name, site.line, site.func) if isinstance(name, (ast.Name, ast.Attribute)) else None
        return made is not None and made.method in m.P.hf_cache_loaders

    @staticmethod
    def _hub_id_bound(m, name, site) -> bool:
        """``model_path = "org/model"`` then ``from_pretrained(model_path)``: the script itself names a Hub id."""
        binding = m.binding(dotted(name), site.line, site.ctx.func) if isinstance(name, ast.Name) else None
        value = const(binding.value) if binding is not None else None
        return isinstance(value, str) and "/" in value.strip("/") and not value.startswith(("/", ".", "~"))

    @staticmethod
    def _barrier_before(m, site) -> bool:
        """A rank-conditional barrier, or a rank-zero-first context entered (``with
        dist.local_rank_zero_download_and_wait(signal): pass``), earlier in the same function: the other ranks wait
        there for rank 0's download."""
        return any((s.method in m.P.barrier_methods and s.rank_conditional or s.method in m.P.rank_zero_first_contexts)
                   and s.line < site.line and s.ctx.func is site.ctx.func for s in m.calls)



def _local_path(m, ident: str) -> bool:
    """A model name that is a path, not a Hub id: absolute, relative to ``.`` or ``~``, ending in ``/``, deeper than
    a Hub id's ``namespace/name`` (``ckpts/sd15/unet``), or a folder of the project beside the scanned file or up to two
    folders above it (``from_pretrained("configs")``: the scheduler config the repository ships)."""
    if ident.startswith(("/", ".", "~")) or ident.endswith("/") or ident.count("/") >= 2:
        return True
    if m.project is None or not ident:
        return False
    folder = m.project.files.folder(m.path)
    bases = (folder, os.path.dirname(folder), os.path.dirname(os.path.dirname(folder)))
    return any(m.project.files.is_dir(os.path.join(base, ident)) for base in bases)


def _as_evidence_allows(m, hits):
    """Warnings where the code shows every rank loading at start-up: in a module that starts the process itself
    (its ``if __name__ == "__main__":`` block or a top-level call of its own function), at module level, or in a
    project with no entry at all (a snippet). A load inside a function of a library module (a model's
    ``__init__``, a dataset builder, a plugin) runs wherever its callers run it, which may be after rank 0 filled
    the cache or under ``main_process_first``: the scan cannot tell a defect from the design there, so it is
    ``info``."""
    library = m.project is not None and m.project.has_entry and not _starts_here(m.tree)
    for hit in hits:
        if library and _in_function(m, hit.line):
            hit.severity = "info"
        yield hit


def _in_function(m, line: int) -> bool:
    return any(f.node.lineno <= line <= (f.node.end_lineno or f.node.lineno)
               for infos in m.functions.values() for f in infos)


def _starts_here(tree: ast.Module) -> bool:
    """The module is a program's entry: an ``if __name__ == "__main__":`` block, or a top-level call of a
    function it defines (``main()`` at the bottom of a script)."""
    own = {stmt.name for stmt in tree.body if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef))}
    for stmt in tree.body:
        if is_main_block(stmt):
            return True
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) and dotted(stmt.value.func) in own:
            return True
    return False


def _one_per_cause(m, hits):
    """At most one hit per cause and file: the first reachable load, naming the lines of the others (every rank
    loading from the Hub at start-up is one defect with one fix, however many models and tokenizers it loads; so is
    every rank mapping its train, eval and test splits into the datasets cache)."""
    hits = [h for h in hits if m.reachable(h.line)]
    if len(hits) > 1:
        others = ", ".join(str(h.line) for h in hits[1:])
        first = hits[0]
        first.detail = f"{first.detail} (also lines {others})"
        hits = [first]
    yield from hits


CHECKER = HfCacheContentionChecker()
