# expect:
# seen-in: https://github.com/Vchitect/Latte/blob/b27c24a17487e3c33ae4e92364521303d0f14845/train.py
# The frozen autoencoder is read from a folder the user downloaded beforehand (the option says "path"; the configs
# point it at a local directory): every rank reads files, nothing is downloaded into a shared cache.
import argparse
import os

import torch
import torch.distributed as dist
from diffusers.models import AutoencoderKL
from torch.nn.parallel import DistributedDataParallel as DDP


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--pretrained_model_path", required=True)
    args = parser.parse_args()
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    vae = AutoencoderKL.from_pretrained(args.pretrained_model_path, subfolder="vae").cuda()
    vae.requires_grad_(False)
    model = DDP(torch.nn.Conv2d(4, 4, 3, padding=1).cuda(), device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    for step in range(100):
        with torch.no_grad():
            latents = vae.encode(torch.randn(2, 3, 64, 64, device="cuda")).latent_dist.sample()
        loss = model(latents).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
