"""hf-cache-contention (scan-recall8): a plain URL download into a local path on every rank at once
(mosaicml/composer#209: the trainer's checkpoint loader ``urlretrieve``-d the remote checkpoint in every process into
the same file; fixed by fetching on rank 0 and sharing the path after a barrier). Spelled with urllib, torch.hub's
``download_url_to_file``, ``wget`` and ``gdown``, in a method, a helper or the script body. Near misses that stay
quiet: the download on rank 0 only (then a barrier), a per-rank destination, and rank 0 first (the others wait at a
barrier before theirs)."""

from __future__ import annotations

import pytest

from tests.scan.conftest import scan_ids

ID = "hf-cache-contention"

SCRIPT = '''
import os
import urllib.request

import gdown
import torch
import torch.distributed as dist
import torch.nn as nn
import wget
from torch.nn.parallel import DistributedDataParallel as DDP

URL = "https://example.org/weights/resnet_pretrained.pth"


class Fetcher:
    def __init__(self, url, cache_dir="/tmp/ckpt"):
        self.url, self.cache_dir = url, cache_dir

{fetch}


def main():
    dist.init_process_group("nccl")
    rank = dist.get_rank()
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    model = nn.Linear(8, 8)
    path = Fetcher(URL).fetch(rank)
    model.load_state_dict(torch.load(path, map_location="cpu"))
    model = DDP(model.cuda(), device_ids=[local_rank])


if __name__ == "__main__":
    main()
'''

FETCHES = {
    "urlretrieve-in-method": '''    def fetch(self, rank):
        path = os.path.join(self.cache_dir, os.path.basename(self.url))
        urllib.request.urlretrieve(self.url, path)
        return path''',
    "torch-hub-download": '''    def fetch(self, rank):
        path = os.path.join(self.cache_dir, "weights.pth")
        torch.hub.download_url_to_file(self.url, path, progress=False)
        return path''',
    "wget": '''    def fetch(self, rank):
        return wget.download(self.url, out=self.cache_dir)''',
    "gdown": '''    def fetch(self, rank):
        return gdown.download(self.url, os.path.join(self.cache_dir, "weights.pth"), quiet=True)''',
}

QUIET = {
    "rank0-then-barrier": '''    def fetch(self, rank):
        path = os.path.join(self.cache_dir, "weights.pth")
        if rank == 0:
            urllib.request.urlretrieve(self.url, path)
        dist.barrier()
        return path''',
    "per-rank-destination": '''    def fetch(self, rank):
        path = os.path.join(self.cache_dir, f"weights_rank{rank}.pth")
        urllib.request.urlretrieve(self.url, path)
        return path''',
    "rank0-first-barrier": '''    def fetch(self, rank):
        path = os.path.join(self.cache_dir, "weights.pth")
        if rank != 0:
            dist.barrier()
        if not os.path.exists(path):
            torch.hub.download_url_to_file(self.url, path)
        if rank == 0:
            dist.barrier()
        return path''',
}


@pytest.mark.parametrize("name", sorted(FETCHES))
def test_url_download_on_every_rank(tmp_path, name):
    assert ID in scan_ids(tmp_path, SCRIPT.format(fetch=FETCHES[name]))


@pytest.mark.parametrize("name", sorted(QUIET))
def test_url_download_near_misses(tmp_path, name):
    assert ID not in scan_ids(tmp_path, SCRIPT.format(fetch=QUIET[name]))
