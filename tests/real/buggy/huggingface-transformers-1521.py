# expect: hf-cache-contention
# source: https://github.com/huggingface/transformers/issues/1521
# reason: In distributed mode each of the n processes downloaded the same model in parallel (n temporary downloads in the log); the thread asks for a local_rank-0-only download.
import argparse

import torch
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler
from transformers import CTRLLMHeadModel, CTRLTokenizer


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--local_rank", type=int, default=-1)
    args = p.parse_args()
    torch.cuda.set_device(args.local_rank)
    torch.distributed.init_process_group(backend="nccl")
    device = torch.device("cuda", args.local_rank)
    tokenizer = CTRLTokenizer.from_pretrained("ctrl")
    model = CTRLLMHeadModel.from_pretrained("ctrl").to(device)
    model = DistributedDataParallel(model, device_ids=[args.local_rank], output_device=args.local_rank)
    ids = torch.tensor([tokenizer.encode("Links Hello world")] * 512)
    data = TensorDataset(ids)
    sampler = DistributedSampler(data)
    loader = DataLoader(data, batch_size=2, sampler=sampler)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-5)
    for epoch in range(2):
        sampler.set_epoch(epoch)
        for (batch,) in loader:
            loss = model(batch.to(device), labels=batch.to(device))[0]
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    torch.distributed.destroy_process_group()


if __name__ == "__main__":
    main()
