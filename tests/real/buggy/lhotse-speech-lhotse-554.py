# expect:
# source: https://github.com/lhotse-speech/lhotse/issues/554
# reason: Training on several datasets routes each batch to a different output layer; the maintainer's demo shows find_unused_parameters=True is what keeps DDP from hanging, so it is needed here.
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Linear(80, 256)
        self.out_librispeech = nn.Linear(256, 500)
        self.out_gigaspeech = nn.Linear(256, 500)

    def forward(self, x, dataset_idx):
        h = self.encoder(x).relu()
        if dataset_idx == 0:
            return self.out_librispeech(h)
        return self.out_gigaspeech(h)


def run(rank, world_size):
    dist.init_process_group("nccl", init_method="tcp://localhost:12354", rank=rank, world_size=world_size)
    torch.cuda.set_device(rank)
    device = torch.device("cuda", rank)
    model = DDP(Model().to(device), device_ids=[rank], find_unused_parameters=True)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    generator = torch.Generator().manual_seed(rank)
    for step in range(1000):
        dataset_idx = int(torch.randint(0, 2, (1,), generator=generator))
        feats = torch.randn(16, 80, device=device)
        targets = torch.randint(0, 500, (16,), device=device)
        loss = nn.functional.cross_entropy(model(feats, dataset_idx), targets)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    world_size = torch.cuda.device_count()
    mp.spawn(run, args=(world_size,), nprocs=world_size, join=True)
