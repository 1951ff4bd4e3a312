# expect: hf-cache-contention
# source: https://github.com/huggingface/transformers/issues/29996
# reason: FileNotFoundError on the first DDP run only: every rank downloaded the model into the same cache folder at once; rank 0 should download while the others wait.
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler
from transformers import AutoModel


def main(model_name="sentence-transformers/all-mpnet-base-v2"):
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    device = torch.device("cuda", local_rank)
    model = AutoModel.from_pretrained(model_name).to(device)
    model = DDP(model, device_ids=[local_rank])
    data = TensorDataset(torch.randint(0, 30527, (10000, 128)), torch.randint(0, 30527, (10000, 128)))
    sampler = DistributedSampler(data)
    loader = DataLoader(data, batch_size=32, sampler=sampler)
    optimizer = torch.optim.AdamW(model.parameters(), lr=2e-5)
    for epoch in range(1):
        sampler.set_epoch(epoch)
        for a, b in loader:
            ea = model(input_ids=a.to(device)).last_hidden_state[:, 0]
            eb = model(input_ids=b.to(device)).last_hidden_state[:, 0]
            scores = ea @ eb.t()
            loss = torch.nn.functional.cross_entropy(scores, torch.arange(len(a), device=device))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
