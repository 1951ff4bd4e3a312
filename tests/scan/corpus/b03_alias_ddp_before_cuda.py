# expect: ddp-before-to-device
# The wrapper is built on the CPU model, then moved: `import torch.nn.parallel as par`.
import os

import torch
import torch.distributed as dist
import torch.nn.parallel as par
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


class Regressor(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.body = torch.nn.Linear(16, 16)
        self.out = torch.nn.Linear(16, 1)

    def forward(self, x):
        return self.out(torch.relu(self.body(x)))


def main():
    rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(rank)
    dist.init_process_group(backend="nccl")
    model = Regressor()
    ddp_model = par.DistributedDataParallel(model, device_ids=[rank])
    ddp_model.cuda()
    data = TensorDataset(torch.randn(512, 16), torch.randn(512, 1))
    sampler = DistributedSampler(data)
    loader = DataLoader(data, batch_size=32, sampler=sampler)
    opt = torch.optim.SGD(ddp_model.parameters(), lr=0.01)
    for epoch in range(2):
        sampler.set_epoch(epoch)
        for x, y in loader:
            loss = torch.nn.functional.mse_loss(ddp_model(x.cuda()), y.cuda())
            opt.zero_grad()
            loss.backward()
            opt.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
