"""hf-cache-contention: every rank downloads / locks the same Hugging Face cache (or dataset directory) at start-up."""

from __future__ import annotations

from troubleshooter.scan.checkers import Checker, Hit
from troubleshooter.scan.model import const, last, source


class HfCacheContentionChecker(Checker):
    """from_pretrained / load_dataset (or a dataset fetcher: ``sklearn.datasets.fetch_*``) on every rank, with no
    rank-0-first guard or barrier before it."""

    id = "hf-cache-contention"

    def check(self, m):
        P = m.P
        sites = m.calls_to(P.hf_cache_loaders)
        downloads = [s for s in m.calls if P.matches("dataset_fetchers", s.name)]
        if any(s.rank_conditional for s in sites + downloads):
            return  # rank 0 fetches first somewhere: the pattern is known to this script
        for site in downloads:
            if not any(last(w) in P.rank_zero_first_contexts for w in site.ctx.withs) and not self._barrier_before(m, site):
                yield Hit(site.line, f"{site.method}(...) downloads the dataset on every rank at once: all ranks write "
                                     "the same files in the same directory; let rank 0 fetch first, then barrier",
                          {"variable": site.method, "model": "the dataset"})
        project_classes = m.project.classes if m.project is not None else set(m.classes)
        for site in sites:
            if any(last(w) in P.rank_zero_first_contexts for w in site.ctx.withs):
                continue
            if last(site.recv) in project_classes or (site.func and site.func.name in P.hf_cache_loaders):
                continue  # the project's own from_pretrained (judged where it is called), or inside it
            if site.name.partition(".")[0] not in P.hub_packages:
                continue  # task.load_dataset(...): a method of the script's own objects, not the Hub's
            name = site.arg(0, "pretrained_model_name_or_path") or site.arg(0, "path")
            ident = const(name)
            if isinstance(ident, str) and ident.startswith(("/", ".", "~")) or const(site.kw("local_files_only")) is True:
                continue
            if self._barrier_before(m, site):
                continue
            what = f"{site.recv}.{site.method}" if site.recv else site.method
            model = source(name) if name is not None else "the model"
            yield Hit(site.line, f"{what}({model}) runs on every rank at once: all ranks download into and lock the "
                                 "same cache; let rank 0 fetch first, then barrier",
                      {"variable": what, "model": model})

    @staticmethod
    def _barrier_before(m, site) -> bool:
        return any(s.method in m.P.barrier_methods and s.rank_conditional and s.line < site.line
                   and s.ctx.func is site.ctx.func for s in m.calls)


CHECKER = HfCacheContentionChecker()
