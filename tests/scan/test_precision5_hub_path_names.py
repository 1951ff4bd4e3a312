"""A Hub loader given a name that says "path" reads a local folder (issue 11, scan-precision5).

Latte: ``AutoencoderKL.from_pretrained(args.pretrained_model_path, subfolder="vae")``, its configs pointing the
option at a folder downloaded beforehand. A name ending in ``path`` (``vae_path``, ``cfg.pretrained_model_path``,
``path``) is a filesystem path, like ``*_dir``; HF's ``model_name_or_path`` ("a Hub id or a path") is not, and a
``*_path`` name the script itself binds to a Hub id (``model_path = "org/model"``) is a Hub download again.
"""

from __future__ import annotations

import pytest

from tests.scan.quality import shown_findings

SCRIPT = '''
import argparse
import os

import torch
import torch.distributed as dist
from diffusers.models import AutoencoderKL
from torch.nn.parallel import DistributedDataParallel as DDP

{module_level}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--pretrained_model_path", default="pretrained/latte")
    args = parser.parse_args()
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
{load}
    model = DDP(torch.nn.Conv2d(4, 4, 3).cuda(), device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters())
    for step in range(10):
        with torch.no_grad():
            latents = vae.encode(torch.randn(2, 3, 64, 64).cuda()).latent_dist.sample()
        loss = model(latents).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


if __name__ == "__main__":
    main()
'''


def _hits(tmp_path, load: str, module_level: str = "") -> dict:
    path = tmp_path / "train.py"
    path.write_text(SCRIPT.format(load=load, module_level=module_level))
    return shown_findings([str(path)])[0]


@pytest.mark.parametrize("load", [
    '    vae = AutoencoderKL.from_pretrained(args.pretrained_model_path, subfolder="vae").cuda()',
    '    vae_path = os.path.join(args.pretrained_model_path, "vae")\n'
    '    vae = AutoencoderKL.from_pretrained(vae_path).cuda()',
    '    path = args.pretrained_model_path\n    vae = AutoencoderKL.from_pretrained(path).cuda()',
], ids=["option_attribute", "joined_path", "bare_path"])
def test_a_path_named_argument_is_a_local_folder(tmp_path, load):
    assert "hf-cache-contention" not in _hits(tmp_path, load)


@pytest.mark.parametrize("load, module_level", [
    ('    vae = AutoencoderKL.from_pretrained(args.model_name_or_path).cuda()', ""),
    ('    model_path = "stabilityai/sd-vae-ft-ema"\n    vae = AutoencoderKL.from_pretrained(model_path).cuda()', ""),
    ('    vae = AutoencoderKL.from_pretrained(VAE_PATH).cuda()', 'VAE_PATH = "stabilityai/sd-vae-ft-mse"'),
], ids=["name_or_path", "path_bound_to_a_hub_id", "module_constant_hub_id"])
def test_a_hub_id_is_still_a_download_on_every_rank(tmp_path, load, module_level):
    assert "hf-cache-contention" in _hits(tmp_path, load, module_level)
