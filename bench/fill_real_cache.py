"""Fill the local cache of real correct training files listed in tests/real/scripts/manifest.yaml.

Each file and its ``with:`` siblings land in
``$DDP_TS_REAL_CACHE/<owner>+<repo>/<commit>/<path>`` (default cache:
``~/.cache/ddp-troubleshooter/real-scripts``). Sources, tried in order:

* ``--from-mirror DIR``: local git mirrors laid out as ``DIR/<owner>+<repo>/repo`` (or a bare
  ``DIR/<owner>+<repo>``), read with ``git show <commit>:<path>``;
* otherwise (or for what the mirror lacks), unless ``--offline``: a shallow ``git fetch`` of the
  pinned commit from ``https://github.com/<owner>/<repo>`` into a scratch repository.

The code is never executed. Prints what it filled and, last, every file it could not fill.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path, PurePosixPath

import yaml

ROOT = Path(__file__).resolve().parent.parent
MANIFEST = ROOT / "tests" / "real" / "scripts" / "manifest.yaml"


def cache_root() -> Path:
    """The cache directory (``$DDP_TS_REAL_CACHE`` or the default under ``~/.cache``)."""
    return Path(os.environ.get("DDP_TS_REAL_CACHE") or Path.home() / ".cache" / "ddp-troubleshooter" / "real-scripts")


def load_manifest(path: Path = MANIFEST) -> list[dict]:
    """The manifest entries (``scripts:`` list)."""
    return yaml.safe_load(path.read_text(encoding="utf-8"))["scripts"]


def entry_dir(entry: dict, root: Path | None = None) -> Path:
    """``<cache>/<owner>+<repo>/<commit>``: where an entry's files live."""
    return (root or cache_root()) / entry["repo"].replace("/", "+") / entry["commit"]


def entry_files(entry: dict) -> list[str]:
    """The file itself, then its ``with:`` siblings (repository-relative paths)."""
    return [entry["path"], *entry.get("with", [])]


def package_inits(entry: dict) -> list[str]:
    """The ``__init__.py`` of every folder above the entry's files (as in any checkout: they make the folders
    packages and re-export their modules' names); filled when the repository has them, never required."""
    folders = {str(parent) for rel in entry_files(entry) for parent in PurePosixPath(rel).parents if str(parent) != "."}
    return sorted(f"{folder}/__init__.py" for folder in folders) + ["__init__.py"]


def _git_show(git_dir: Path, commit: str, path: str) -> bytes | None:
    proc = subprocess.run(["git", "-C", str(git_dir), "show", f"{commit}:{path}"], capture_output=True)
    return proc.stdout if proc.returncode == 0 else None


def _mirror_dir(mirrors: Path, repo: str) -> Path | None:
    base = mirrors / repo.replace("/", "+")
    for candidate in (base / "repo", base):
        if (candidate / "HEAD").exists() or (candidate / ".git").exists():
            return candidate
    return None


def _fetch_commit(repo: str, commit: str, scratch: Path) -> Path | None:
    """A scratch git dir holding ``commit`` fetched from GitHub, or None (no network, gone...)."""
    git_dir = scratch / repo.replace("/", "+")
    if not git_dir.exists():
        subprocess.run(["git", "init", "-q", "--bare", str(git_dir)], check=True)
    proc = subprocess.run(["git", "-C", str(git_dir), "fetch", "-q", "--depth", "1",
                           f"https://github.com/{repo}", commit], capture_output=True, timeout=600)
    return git_dir if proc.returncode == 0 else None


def fill(entries: list[dict], mirrors: Path | None, offline: bool, root: Path) -> list[str]:
    """Write every missing file into the cache; return 'repo@commit:path (why)' for each one not filled."""
    missing: list[str] = []
    with tempfile.TemporaryDirectory(prefix="ddp-ts-fetch-") as tmp:
        fetched: dict[tuple[str, str], Path | None] = {}
        for entry in entries:
            repo, commit = entry["repo"], entry["commit"]
            for rel in entry_files(entry):
                target = entry_dir(entry, root) / rel
                if target.is_file():
                    continue
                data = None
                mirror = _mirror_dir(mirrors, repo) if mirrors else None
                if mirror is not None:
                    data = _git_show(mirror, commit, rel)
                if data is None and not offline:
                    key = (repo, commit)
                    if key not in fetched:
                        fetched[key] = _fetch_commit(repo, commit, Path(tmp))
                    if fetched[key] is not None:
                        data = _git_show(fetched[key], commit, rel)
                if data is None:
                    why = "no mirror" if mirror is None else "not in mirror"
                    missing.append(f"{repo}@{commit[:12]}:{rel} ({why}{'' if offline else ', fetch failed'})")
                    continue
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(data)
            mirror = _mirror_dir(mirrors, repo) if mirrors else None
            for rel in package_inits(entry):  # optional: only what the mirror (or an earlier fetch) holds
                target = entry_dir(entry, root) / rel
                source = mirror or fetched.get((repo, commit))
                if target.is_file() or source is None:
                    continue
                data = _git_show(source, commit, rel)
                if data is not None:
                    target.parent.mkdir(parents=True, exist_ok=True)
                    target.write_bytes(data)
    return missing


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--from-mirror", type=Path, help="directory of local git mirrors (<owner>+<repo>/repo)")
    parser.add_argument("--offline", action="store_true", help="never fetch from GitHub")
    args = parser.parse_args(argv)
    root = cache_root()
    entries = load_manifest()
    missing = fill(entries, args.from_mirror, args.offline, root)
    total = sum(len(entry_files(e)) for e in entries)
    print(f"cache: {root}")
    print(f"{total - len(missing)}/{total} files present ({len(entries)} manifest entries)")
    for line in missing:
        print(f"not filled: {line}")
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
