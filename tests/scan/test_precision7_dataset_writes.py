"""logging-from-all-ranks: a write for one sample of a map-style dataset is no shared file (issue 11, scan-precision7).

A dataset that caches a feature on first read (``__getitem__`` -> ``get_audio`` -> ``torch.save(spec, wav +
".spec.pt")``, the VITS / so-vits-svc family) writes one file per sample; the DistributedSampler hands each sample to
one rank, so every file has one writer. The write is reached from ``__getitem__`` directly or through the class's own
methods, under any names. The same ``torch.save`` of one shared file in a dataset method that ``__getitem__`` never
reaches (a ``save_index`` called by the training script), or in a plain class without ``__getitem__``, still warns.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.scan.quality import shown_findings

ID = "logging-from-all-ranks"

TEMPLATE = '''
import os
import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, Dataset
from torch.utils.data.distributed import DistributedSampler


class {cls}({base}):
    def __init__(self, paths):
        self.paths = paths
{methods}

    def __len__(self):
        return len(self.paths)


def main():
    dist.init_process_group("nccl")
    local = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local)
    data = {cls}(sorted(os.listdir("clips")))
{after_build}
    sampler = DistributedSampler(data)
    loader = DataLoader(data, batch_size=4, sampler=sampler)
    net = DDP(nn.Linear(8, 1).cuda(), device_ids=[local])
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    for epoch in range(2):
        sampler.set_epoch(epoch)
        for x in loader:
            loss = net(x.cuda()).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
'''

DIRECT = '''
    def __getitem__(self, index):
        name = self.paths[index]
        cached = name + ".feat.pt"
        if os.path.exists(cached):
            return torch.load(cached)
        feat = torch.randn(8)
        torch.save(feat, cached)
        return feat'''
ONE_HELPER = '''
    def {helper}(self, name):
        cache_file = name.replace(".wav", ".spec.pt")
        if os.path.exists(cache_file):
            return torch.load(cache_file)
        spec = torch.randn(8)
        torch.save(spec, cache_file)
        return spec

    def __getitem__(self, i):
        return self.{helper}(self.paths[i])'''
TWO_HELPERS = '''
    def load_pair(self, entry):
        return self.spectrogram_of(entry)

    def spectrogram_of(self, entry):
        target = f"{entry}.mel.pt"
        if not os.path.isfile(target):
            torch.save(torch.randn(8), target)
        return torch.load(target)

    def __getitem__(self, k):
        return self.load_pair(self.paths[k])'''

QUIET = {
    "in __getitem__": ("Clips", "Dataset", DIRECT),
    "one helper": ("SpecDataset", "torch.utils.data.Dataset", ONE_HELPER.format(helper="get_audio")),
    "one helper, other names": ("Corpus", "Dataset", ONE_HELPER.format(helper="features")),
    "two helpers deep": ("MelSet", "Dataset", TWO_HELPERS),
}

SHARED_INDEX = '''
    def save_index(self):
        torch.save(self.paths, "index.pt")

    def __getitem__(self, i):
        return torch.randn(8)'''
NO_ITEMS = '''
    def cache(self, i):
        torch.save(torch.randn(8), "features.pt")'''

LOUD = {
    "shared file in a method __getitem__ never reaches": ("Clips", "Dataset", SHARED_INDEX, "    data.save_index()"),
    "class without __getitem__": ("Store", "object", NO_ITEMS, "    data.cache(0)"),
}


def _warned(tmp_path: Path, cls: str, base: str, methods: str, after_build: str = "") -> bool:
    path = tmp_path / "train.py"
    path.write_text(TEMPLATE.format(cls=cls, base=base, methods=methods, after_build=after_build))
    return ID in shown_findings([str(path)])[0]


@pytest.mark.parametrize("case", QUIET, ids=list(QUIET))
def test_per_sample_cache_written_for_one_item_is_quiet(tmp_path, case):
    assert not _warned(tmp_path, *QUIET[case])


@pytest.mark.parametrize("case", LOUD, ids=list(LOUD))
def test_one_shared_file_written_on_every_rank_still_warns(tmp_path, case):
    assert _warned(tmp_path, *LOUD[case])
