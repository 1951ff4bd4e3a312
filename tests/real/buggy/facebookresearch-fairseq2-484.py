# expect: unsynced-dropout-rng
# source: https://github.com/facebookresearch/fairseq2/pull/484
# reason: LayerDrop skipped a random subset of layers per rank; DDP then silently failed to sync gradients (or failed cryptically), which the merged PR fixes by keeping the autograd graph constant.
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


class LayerDropEncoder(nn.Module):
    def __init__(self, dim=512, num_layers=12, layer_drop_p=0.1):
        super().__init__()
        self.layers = nn.ModuleList([nn.TransformerEncoderLayer(dim, 8, batch_first=True) for _ in range(num_layers)])
        self.layer_drop_p = layer_drop_p

    def forward(self, x):
        drop = torch.rand(len(self.layers))
        for layer, p in zip(self.layers, drop):
            if self.training and p < self.layer_drop_p:
                continue
            x = layer(x)
        return x


def main(steps=10000):
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    device = torch.device("cuda", local_rank)
    model = DDP(LayerDropEncoder().to(device), device_ids=[local_rank], find_unused_parameters=True)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    for step in range(steps):
        x = torch.randn(8, 128, 512, device=device)
        loss = model(x).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
