"""Speed-only shortcuts of scan-speed11 change no finding: the distributed path reads a module's imports from its
top-level statements alone only when its bytes spell ``import`` no more often than they hold import statements, so an
import nested in a function, a ``try`` or a one-line ``if`` is still found, and a word in a comment or a string is
not taken for an import."""

from __future__ import annotations

import pytest

from troubleshooter.scan import shipped_patterns
from troubleshooter.scan.project import Project
from troubleshooter.scan.runner import parse

STARTER = "import torch.distributed as dist\n\ndef setup():\n    dist.init_process_group('nccl')\n"

IMPORTERS = {
    "at the top": ("import os\nimport starter\n", True),
    "in a function": ("import os\n\ndef run():\n    import starter\n", True),
    "in a try": ("try:\n    import starter\nexcept ImportError:\n    starter = None\n", True),
    "in a one-line if": ("import os\nif os.environ.get('X'): from starter import setup\n", True),
    "after the word in a comment": ("import os  # imports the trainer lazily\n\ndef run():\n"
                                    "    from starter import setup\n", True),
    "in a comment only": ("import os\n# import starter\n", False),
    "in a string only": ("import os\nDOC = 'import starter'\n", False),
}


@pytest.mark.parametrize("name", sorted(IMPORTERS))
def test_a_module_importing_the_starter_is_on_the_distributed_path(tmp_path, name):
    source, on_path = IMPORTERS[name]
    modules = []
    for file, text in (("starter.py", STARTER), ("importer.py", source)):
        path = str(tmp_path / file)
        data = text.encode()
        (tmp_path / file).write_bytes(data)
        modules.append((path, data, parse(path, data)))
    project = Project(shipped_patterns())
    found = project.distributed_path(modules)
    assert found is not None and project.key(modules[0][0]) in found
    assert (project.key(modules[1][0]) in found) is on_path
