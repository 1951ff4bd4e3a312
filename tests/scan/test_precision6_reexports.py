"""Helpers reached through a package's re-exports and from deep inside the package (issue 11, scan-precision6).

efficientvit's trainer (``efficientvit/apps/trainer/base.py``) imports ``dist_barrier`` from
``efficientvit.apps.utils``, whose ``__init__.py`` only re-exports ``from .dist import *``; the trainer sits three
folders below the package root. The scan now resolves an absolute import of the file's own package from the
package root however deep the file is, follows a package's re-exports (``*`` or the name) to the module that defines
the helper, and inlines helpers called in methods; barrier helpers count as barriers where they are called. A
helper of the same name that does not wait is still no barrier.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from tests.scan.quality import shown_findings
from troubleshooter.scan.project import FileLookups

CONSTRUCT = Path(__file__).resolve().parents[1] / "real" / "constructs" / "reexported_package_helpers"
ID = "no-barrier-before-checkpoint-load"


def _copy(tmp_path: Path) -> Path:
    target = tmp_path / "project"
    shutil.copytree(CONSTRUCT, target)
    return target


def _found(root: Path) -> dict:
    return shown_findings([str(root)])[0]


def test_each_reexport_spelling_reaches_the_helpers(tmp_path):
    for spelling in ("from .dist import *\n",
                     "from .dist import dist_barrier, get_dist_local_rank, is_master, setup_dist_env\n",
                     "from vitpkg.utils.dist import *\n"):
        root = _copy(tmp_path / str(abs(hash(spelling))))
        (root / "vitpkg" / "utils" / "__init__.py").write_text(spelling)
        assert _found(root) == {}, spelling


def test_a_helper_defined_in_the_init_itself_still_counts(tmp_path):
    root = _copy(tmp_path)
    utils = root / "vitpkg" / "utils"
    (utils / "__init__.py").write_text((utils / "dist.py").read_text())
    (utils / "dist.py").unlink()
    assert _found(root) == {}


def test_a_namesake_helper_that_does_not_wait_is_no_barrier(tmp_path):
    root = _copy(tmp_path)
    dist = root / "vitpkg" / "utils" / "dist.py"
    dist.write_text(dist.read_text().replace("        torch.distributed.barrier()", "        print('sync')"))
    assert ID in _found(root)


def test_an_absolute_import_of_the_own_package_resolves_from_its_root(tmp_path):
    root = _copy(tmp_path)
    lookups = FileLookups()
    base = str(root / "vitpkg" / "apps" / "trainer" / "base.py")
    assert lookups.find(base, "vitpkg.utils", 0) == str(root / "vitpkg" / "utils" / "__init__.py")
    assert lookups.find(base, "vitpkg.utils.dist", 0) == str(root / "vitpkg" / "utils" / "dist.py")
    assert lookups.find(base, "otherpkg.utils", 0) is None  # not the file's own package: not local
