# expect: missing-set-device
# source: https://github.com/rwth-i6/returnn/issues/1469
# reason: Under torchrun every worker reserved memory on every GPU: the engine addressed its device as "cuda:<local_rank>" but never made it current, so CUDA context and allocations also landed on GPU 0; adding torch.cuda.set_device fixed it.
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


class DistributedContext:
    def __init__(self):
        dist.init_process_group("nccl")
        self.rank = dist.get_rank()
        self.size = dist.get_world_size()
        self.local_rank = int(os.environ["LOCAL_RANK"])


class Engine:
    def __init__(self, ctx):
        self._ctx = ctx
        self._device = f"cuda:{ctx.local_rank}"
        self._model = None
        self._optimizer = None

    def init_train(self):
        model = nn.LSTM(80, 512, num_layers=4, batch_first=True).to(self._device)
        self._model = nn.parallel.DistributedDataParallel(model, device_ids=[self._ctx.local_rank])
        self._optimizer = torch.optim.AdamW(self._model.parameters(), lr=1e-3)

    def train_epoch(self, loader):
        for feats, targets in loader:
            out, _ = self._model(feats.to(self._device))
            loss = nn.functional.mse_loss(out[..., :1], targets.to(self._device))
            self._optimizer.zero_grad()
            loss.backward()
            self._optimizer.step()


def main():
    ctx = DistributedContext()
    engine = Engine(ctx)
    engine.init_train()
    dataset = TensorDataset(torch.randn(3000, 100, 80), torch.randn(3000, 100, 1))
    sampler = DistributedSampler(dataset)
    loader = DataLoader(dataset, batch_size=16, sampler=sampler)
    for epoch in range(10):
        sampler.set_epoch(epoch)
        engine.train_epoch(loader)


if __name__ == "__main__":
    main()
