"""A name handed to ``from_pretrained`` is a Hub id only when it can be one: ``namespace/name`` or a bare legacy name.
Deeper relative paths (``ckpts/sd15/unet``), a name ending in ``/`` and names of folders the repository ships beside the script or above it
(LatentSync's ``DDIMScheduler.from_pretrained("configs")``) are local loads; Hub ids still warn."""

from __future__ import annotations

import pytest

from tests.scan.conftest import shows

TEMPLATE = '''import os
import torch
import torch.distributed as dist
from diffusers import AutoencoderKL, DDIMScheduler


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    loaded = {load}
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
'''
CASES = {
    "a folder beside the script": ('DDIMScheduler.from_pretrained("configs")', "configs", False),
    "a folder of the repository above it": ('DDIMScheduler.from_pretrained("assets")', "../assets", False),
    "a path deeper than a Hub id": ('AutoencoderKL.from_pretrained("ckpts/sd15/vae")', None, False),
    "a folder named with a trailing slash": ('AutoencoderKL.from_pretrained("checkpoints/vae/")', None, False),
    "a Hub id": ('AutoencoderKL.from_pretrained("stabilityai/sd-vae-ft-mse")', None, True),
    "a bare name no folder holds": ('DDIMScheduler.from_pretrained("scheduler")', None, True),
}


@pytest.mark.parametrize("load, folder, warns", CASES.values(), ids=CASES.keys())
def test_a_project_path_is_not_a_hub_id(tmp_path, load, folder, warns):
    project = tmp_path / "repo" / "scripts"
    project.mkdir(parents=True)
    if folder:
        (project / folder).mkdir()
    assert shows(project, "hf-cache-contention", TEMPLATE.format(load=load)) is warns
