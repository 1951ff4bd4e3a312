# expect: hardcoded-cuda0
# source: https://github.com/facebookresearch/fairseq/issues/3385
# reason: Under torch.distributed.launch every process kept device_id 0, so only GPU 0 of each node had load and training stalled; setting device_id from local_rank fixed it.
import argparse

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


def distributed_init(cfg):
    dist.init_process_group(backend="nccl", init_method="env://")
    cfg.distributed_rank = dist.get_rank()
    torch.cuda.set_device(cfg.device_id)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--device-id", type=int, default=0)
    parser.add_argument("--local_rank", type=int, default=0)
    parser.add_argument("--max-update", type=int, default=20000)
    cfg = parser.parse_args()
    distributed_init(cfg)
    model = nn.Transformer(d_model=512, nhead=4, num_encoder_layers=3, num_decoder_layers=3, batch_first=True)
    model = DistributedDataParallel(model.cuda(), device_ids=[cfg.device_id], output_device=cfg.device_id)
    data = TensorDataset(torch.randn(29000, 20, 512), torch.randn(29000, 20, 512))
    sampler = DistributedSampler(data)
    loader = DataLoader(data, batch_size=32, sampler=sampler)
    optimizer = torch.optim.Adam(model.parameters(), lr=5e-4, betas=(0.9, 0.98))
    updates, epoch = 0, 0
    while updates < cfg.max_update:
        sampler.set_epoch(epoch)
        for src, tgt in loader:
            loss = nn.functional.mse_loss(model(src.cuda(), tgt.cuda()), tgt.cuda())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            updates += 1
        epoch += 1
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
