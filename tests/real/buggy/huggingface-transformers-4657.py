# expect: missing-set-device
# source: https://github.com/huggingface/transformers/issues/4657
# reason: fp16 runs with torch.distributed.launch failed until each process set its current device (torch.cuda.set_device(local_rank)), the fix proposed and confirmed in the thread.
import argparse
import logging

import torch
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler

logger = logging.getLogger(__name__)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--local_rank", type=int, default=-1)
    parser.add_argument("--fp16", action="store_true")
    parser.add_argument("--num_train_epochs", type=int, default=3)
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO if args.local_rank in [-1, 0] else logging.WARN)

    torch.distributed.init_process_group(backend="nccl")
    device = torch.device("cuda", args.local_rank)

    model = nn.Sequential(nn.Embedding(30522, 256), nn.Flatten(), nn.Linear(256 * 128, 30522)).to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=5e-5)
    scaler = torch.cuda.amp.GradScaler(enabled=args.fp16)
    model = DistributedDataParallel(model, device_ids=[args.local_rank], output_device=args.local_rank)

    data = TensorDataset(torch.randint(0, 30522, (4096, 128)), torch.randint(0, 30522, (4096,)))
    sampler = DistributedSampler(data)
    loader = DataLoader(data, sampler=sampler, batch_size=8)
    for epoch in range(args.num_train_epochs):
        sampler.set_epoch(epoch)
        for input_ids, labels in loader:
            with torch.autocast("cuda", enabled=args.fp16):
                loss = nn.functional.cross_entropy(model(input_ids.to(device)), labels.to(device))
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
            optimizer.zero_grad()
        logger.info("epoch %d done", epoch)
    torch.distributed.destroy_process_group()


if __name__ == "__main__":
    main()
