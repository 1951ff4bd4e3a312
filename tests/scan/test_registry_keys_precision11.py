"""An early return on an empty parameter before a collective is a hang when the parameter is this rank's own data,
and advice (severity info) when every caller passes the names of a module-level registry: the test then asks
whether any name was registered, which the code every rank runs decides alike (the statistics registries of
NVlabs' training_stats and its copies)."""

from __future__ import annotations

import pytest

from tests.scan.conftest import shows

TEMPLATE = '''import os
import torch
import torch.distributed as dist
{registry}


def _sync(names):
    if {test}:
        return []
    values = torch.stack([_REG[n] for n in names])
    dist.all_reduce(values)
    return values


class Stats:
    def names(self):
        return {keys}

    def update(self):
        return _sync({argument})


def main():
    dist.init_process_group("gloo")
    _REG["loss"] = torch.zeros(2)
    print(Stats().update())


if __name__ == "__main__":
    main()
'''
REGISTRY_KEYS = {
    "comprehension over dict()": ("_REG = dict()", "len(names) == 0", "[n for n in _REG if n]", "self.names()"),
    "list of a {} literal": ("_REG = {}", "not names", "list(_REG)", "self.names()"),
    "sorted keys": ("_REG = dict()", "len(names) == 0", "sorted(_REG.keys())", "self.names()"),
}
RANK_DATA = {
    "a local list": ("_REG = dict()", "len(names) == 0", "[n for n in _REG if n]",
                     "[n for n in self.names() if n in os.environ]"),
    "keys filtered by rank": ("_REG = dict()", "not names", "[n for n in _REG if n]",
                              "self.names() if dist.get_rank() == 0 else []"),
    "a function-local dict": ("_REG = dict()", "not names", "[n for n in dict(os.environ) if n]", "self.names()"),
}


@pytest.mark.parametrize("registry, test, keys, argument", REGISTRY_KEYS.values(), ids=REGISTRY_KEYS.keys())
def test_registry_names_make_the_early_return_advice(tmp_path, registry, test, keys, argument):
    code = TEMPLATE.format(registry=registry, test=test, keys=keys, argument=argument)
    assert not shows(tmp_path, "collective-mismatch", code)


@pytest.mark.parametrize("registry, test, keys, argument", RANK_DATA.values(), ids=RANK_DATA.keys())
def test_rank_data_still_makes_the_early_return_a_hang(tmp_path, registry, test, keys, argument):
    code = TEMPLATE.format(registry=registry, test=test, keys=keys, argument=argument)
    assert shows(tmp_path, "collective-mismatch", code)
