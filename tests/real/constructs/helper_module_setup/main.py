# expect:
# seen-in: https://github.com/openai/guided-diffusion/blob/22e0df8183507e13a7813f8d38d51b072ca1e67c/scripts/image_train.py
# The entry point calls set-up and the training loop in local helper modules: the process group and the DDP
# wrap live in dist_util.py / train_loop.py, the sharded loader in the entry point.
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler

import dist_util
from train_loop import TrainLoop


def main():
    dist_util.setup_dist()
    model = nn.Sequential(nn.Conv2d(3, 64, 3, padding=1), nn.SiLU(), nn.Conv2d(64, 3, 3, padding=1))
    model.to(dist_util.dev())
    data = TensorDataset(torch.randn(10000, 3, 64, 64))
    sampler = DistributedSampler(data)
    loader = DataLoader(data, batch_size=16, sampler=sampler, num_workers=1, drop_last=True)
    TrainLoop(model=model, loader=loader, sampler=sampler, lr=1e-4).run_loop(epochs=100)
    dist_util.cleanup()


if __name__ == "__main__":
    main()
