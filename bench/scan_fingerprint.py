"""A fingerprint of everything the scanner reports on the speed corpora, to show that a speed-only change is one.

Usage: python bench/scan_fingerprint.py [--out FILE] [--speedtree DIR] [--torch DIR] [--real-cache DIR]

Scans, with this checkout's scanner: the installed torch package's sources file by file (``FileScanner.scan``, what
``bench/scan_throughput.py`` times), the speed tree (default ``/tmp/speedtree``; skipped with a note when absent) as
one project, each of its top folders as a project and file by file, every script of ``tests/real/buggy`` and
``tests/real/constructs`` and ``tests/scan/corpus`` as its own project (what ``bench/scan_quality.py`` does), and the
real-file cache (default ``~/.cache/ddp-troubleshooter/real-scripts``; skipped with a note when absent): each cached
repository commit as one project and each manifest entry's files as one scan. The real files' lines are written as one
digest per scan, never as hits: the cache holds test-split files, whose findings are not to be read. Each
hit becomes one line ``corpus<TAB>finding id<TAB>file<TAB>line<TAB>detail`` (plus each scan's other facts: files,
syntax errors, uses_distributed, dataloader workers, internal errors); the lines are sorted and their SHA-256 is
printed. ``--out FILE`` writes the lines, to diff two checkouts' answers. Takes a minute or two.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # this checkout's scanner, not an installed one

from troubleshooter.scan import iter_python_files, scan_paths, shipped_patterns  # noqa: E402
from troubleshooter.scan.checkers import all_checkers  # noqa: E402
from troubleshooter.scan.runner import FileScanner  # noqa: E402


def _relative(path: str, base: Path) -> str:
    """``path`` under ``base`` without the base (the fingerprint must not depend on where the corpus lives)."""
    try:
        return str(Path(path).resolve().relative_to(base.resolve()))
    except ValueError:
        return path


def _hit_lines(corpus: str, hits: dict[str, list[dict]], base: Path) -> list[str]:
    return [f"{corpus}\t{ident}\t{_relative(h['path'], base)}\t{h['line']}\t{h.get('detail', '')}"
            for ident, found in hits.items() for h in found]


def _project_lines(corpus: str, target: Path, base: Path) -> list[str]:
    """The hits and the other facts of ``target`` scanned as one project."""
    result = scan_paths([str(target)])
    others = {k: v for k, v in result.facts.items() if not (k.startswith("scan.") and isinstance(v, list))
              or k == "scan.syntax_errors"}
    others["internal_errors"] = result.internal_errors
    facts = json.dumps(others, sort_keys=True, default=str).replace(str(base.resolve()), "").replace(str(base), "")
    return _hit_lines(corpus, result.hits, base) + [f"{corpus}\tfacts\t{_relative(str(target), base)}\t0\t{facts}"]


def _file_lines(corpus: str, root: Path) -> list[str]:
    """The hits of every file under ``root`` scanned alone, one after another with one scanner."""
    scanner = FileScanner(all_checkers(), shipped_patterns())
    lines = []
    for path, ok in iter_python_files([str(root)]):
        if ok:
            outcome = scanner.scan(path, Path(path).read_bytes())
            lines += _hit_lines(corpus, outcome.hits, root)
            if outcome.syntax_error or outcome.internal_errors:
                lines.append(f"{corpus}\terrors\t{_relative(path, root)}\t0\t{outcome.syntax_error} "
                             f"{outcome.internal_errors}")
    return lines


def _digest_line(corpus: str, name: str, lines: list[str]) -> str:
    """One line standing for a scan's lines: its name and their digest (what changed is told, not what was found)."""
    return f"{corpus}\t{name}\t{hashlib.sha256(chr(10).join(sorted(lines)).encode()).hexdigest()[:16]}"


def _real_cache_lines(cache: Path) -> list[str]:
    """A digest of each cached repository commit scanned as one project and of each manifest entry's files scanned
    together (as ``bench/scan_quality.py`` scans them)."""
    import yaml

    lines = []
    for commit in sorted(p for p in cache.glob("*/*") if p.is_dir()):
        name = f"{commit.parent.name}/{commit.name}"
        lines.append(_digest_line("real-cache/project", name, _project_lines("real", commit, commit)))
    manifest = yaml.safe_load((ROOT / "tests" / "real" / "scripts" / "manifest.yaml").read_text(encoding="utf-8"))
    for entry in manifest["scripts"]:
        base = cache / entry["repo"].replace("/", "+") / entry["commit"]
        paths = [base / rel for rel in (entry["path"], *entry.get("with", []))]
        if all(p.is_file() for p in paths):
            result = scan_paths([str(p) for p in paths])
            found = _hit_lines("real", result.hits, base) + [
                f"facts\t{json.dumps(result.facts.get('scan.uses_distributed'))}\t{len(result.internal_errors)}"]
            lines.append(_digest_line("real-cache/entry", f"{entry['repo']}/{entry['path']}", found))
    return lines


def fingerprint(torch_dir: Path | None, speedtree: Path | None, real_cache: Path | None = None) -> list[str]:
    """Every line of the fingerprint, sorted."""
    lines: list[str] = []
    if real_cache is not None:
        lines += _real_cache_lines(real_cache)
    if torch_dir is not None:
        lines += _file_lines("torch/files", torch_dir)
    if speedtree is not None:
        lines += _project_lines("speedtree/project", speedtree, speedtree)
        for top in sorted(p for p in speedtree.iterdir() if p.is_dir()):
            lines += _project_lines("speedtree/repository", top, speedtree)
        lines += _file_lines("speedtree/files", speedtree)
    real = ROOT / "tests" / "real"
    for corpus, folder in (("buggy", real / "buggy"), ("constructs", real / "constructs"),
                           ("self-written", ROOT / "tests" / "scan" / "corpus")):
        for item in sorted(folder.iterdir()):
            if item.suffix == ".py" or (item.is_dir() and item.name != "__pycache__"):
                lines += _project_lines(corpus, item, folder)
    return sorted(lines)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python bench/scan_fingerprint.py", description=__doc__.splitlines()[0])
    parser.add_argument("--out", metavar="FILE", help="write the fingerprint's lines to FILE")
    parser.add_argument("--speedtree", default="/tmp/speedtree", metavar="DIR", help="default: /tmp/speedtree")
    parser.add_argument("--torch", metavar="DIR", help="default: the installed torch package's sources")
    parser.add_argument("--real-cache", metavar="DIR", help="default: $DDP_TS_REAL_CACHE or "
                                                            "~/.cache/ddp-troubleshooter/real-scripts")
    args = parser.parse_args(argv)
    from bench.scan_throughput import torch_root  # noqa: E402  (after sys.path: this checkout's bench)
    torch_dir = Path(args.torch or torch_root())
    speedtree = Path(args.speedtree) if os.path.isdir(args.speedtree) else None
    if speedtree is None:
        print(f"note: {args.speedtree} is absent: the speed tree is not in this fingerprint", file=sys.stderr)
    cache = args.real_cache or os.environ.get("DDP_TS_REAL_CACHE") or \
        str(Path.home() / ".cache" / "ddp-troubleshooter" / "real-scripts")
    real_cache = Path(cache) if os.path.isdir(cache) else None
    if real_cache is None:
        print(f"note: {cache} is absent: the real files are not in this fingerprint", file=sys.stderr)
    lines = fingerprint(torch_dir, speedtree, real_cache)
    digest = hashlib.sha256("\n".join(lines).encode()).hexdigest()
    if args.out:
        Path(args.out).write_text("\n".join(lines) + "\n", encoding="utf-8")
    counts = {}
    for line in lines:
        corpus = line.split("\t", 1)[0]
        counts[corpus] = counts.get(corpus, 0) + 1
    print(" ".join(f"{corpus}:{n}" for corpus, n in sorted(counts.items())))
    print(f"sha256 {digest}  ({len(lines)} lines)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
