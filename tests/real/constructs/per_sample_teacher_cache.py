# expect:
# seen-in: https://github.com/yoshitomo-matsubara/torchdistill/blob/3e4373c45214c5c56eebac481d5bfe8b8735aa05/examples/torchvision/image_classification.py
# Knowledge distillation caches the teacher's output of each sample in the sample's own file (its path comes with the
# batch); the DistributedSampler gives each sample to one rank, so every cache file has one writer.
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, Dataset
from torch.utils.data.distributed import DistributedSampler


class Indexed(Dataset):
    def __len__(self):
        return 256

    def __getitem__(self, index):
        return torch.randn(8), f"teacher_cache/{index}.pt"


def write_teacher_cache(outputs, cache_paths):
    for position, (output, cache_path) in enumerate(zip(outputs, cache_paths)):
        torch.save({"output": output, "position": position}, cache_path)


def main():
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    teacher = nn.Linear(8, 4).cuda().eval()
    student = DDP(nn.Linear(8, 4).cuda(), device_ids=[local_rank])
    optimizer = torch.optim.SGD(student.parameters(), lr=0.01)
    data = Indexed()
    sampler = DistributedSampler(data)
    loader = DataLoader(data, batch_size=16, sampler=sampler)
    os.makedirs("teacher_cache", exist_ok=True)
    for epoch in range(3):
        sampler.set_epoch(epoch)
        for x, paths in loader:
            x = x.cuda()
            with torch.no_grad():
                target = teacher(x)
            write_teacher_cache(target.cpu(), paths)
            loss = (student(x) - target).pow(2).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
