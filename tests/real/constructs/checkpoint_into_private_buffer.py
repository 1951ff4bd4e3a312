# expect:
# seen-in: https://github.com/salesforce/LAVIS/blob/506965b9c4a18c1e565bd32acaccabe0198433f7/train.py
# Checkpoints serialised into an in-memory buffer or a temporary folder before an upload (the mmcv
# save_checkpoint vendored in this repository): the bytes stay in the process, no file is shared by the ranks.
import io
import os
import tempfile

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


def upload(client, state, name):
    with io.BytesIO() as buffer:
        torch.save(state, buffer)
        client.put(buffer.getvalue(), name)
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, name)
        torch.save(state, path)
        client.put_file(path, name)


def main(client):
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    data = TensorDataset(torch.randn(512, 8), torch.randn(512, 1))
    sampler = DistributedSampler(data)
    loader = DataLoader(data, batch_size=16, sampler=sampler)
    model = DistributedDataParallel(nn.Linear(8, 1).cuda(local_rank), device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(3):
        sampler.set_epoch(epoch)
        for x, y in loader:
            loss = nn.functional.mse_loss(model(x.cuda(local_rank)), y.cuda(local_rank))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        upload(client, model.module.state_dict(), f"rank{dist.get_rank()}_epoch{epoch}.pth")
    dist.destroy_process_group()


if __name__ == "__main__":
    main(client=None)
