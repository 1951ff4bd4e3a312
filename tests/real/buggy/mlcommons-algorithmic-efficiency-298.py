# expect: hf-cache-contention
# source: https://github.com/mlcommons/algorithmic-efficiency/pull/298
# reason: Under torch DDP every process downloaded and extracted the WMT dataset into the same data directory at start-up and the runner crashed with a file-exists error; the merged fix lets one process prepare the data while the others wait.
import os

import tensorflow_datasets as tfds
import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP

USE_PYTORCH_DDP = "LOCAL_RANK" in os.environ


def build_input_queue(data_dir, split="train"):
    builder = tfds.builder("wmt17_translate/de-en", data_dir=data_dir)
    builder.download_and_prepare()
    return builder.as_dataset(split=split, shuffle_files=True)


def main(data_dir="/data/wmt"):
    if USE_PYTORCH_DDP:
        rank = int(os.environ["LOCAL_RANK"])
        torch.cuda.set_device(rank)
        dist.init_process_group("nccl")
    else:
        rank = 0
    dataset = build_input_queue(data_dir)
    model = nn.Transformer(d_model=512).cuda()
    if USE_PYTORCH_DDP:
        model = DDP(model, device_ids=[rank])
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)
    for example in tfds.as_numpy(dataset.take(1000)):
        src = torch.randn(32, 8, 512, device="cuda")
        loss = model(src, src).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


if __name__ == "__main__":
    main()
