# expect: missing-set-device
# source: https://github.com/allenai/OLMo/pull/720
# reason: GPU 0 used more memory than the others on some runs because the training script initialised the NCCL process group before calling torch.cuda.set_device; the merged fix moves set_device ahead of init_process_group, which reduced GPU 0's memory.
import logging
import os
import sys
from dataclasses import dataclass
from datetime import timedelta

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.distributed.fsdp import FullyShardedDataParallel as FSDP
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler

log = logging.getLogger("train")


@dataclass
class TrainConfig:
    distributed_strategy: str = "ddp"
    d_model: int = 1024
    vocab_size: int = 50304
    seq_len: int = 512
    micro_batch_size: int = 8
    max_steps: int = 10_000
    lr: float = 4e-4


def get_local_rank() -> int:
    return int(os.environ.get("LOCAL_RANK") or 0)


def get_global_rank() -> int:
    return int(os.environ.get("RANK") or dist.get_rank())


class TinyLM(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.wte = nn.Embedding(cfg.vocab_size, cfg.d_model)
        self.block = nn.TransformerEncoderLayer(cfg.d_model, 16, 4 * cfg.d_model, batch_first=True, norm_first=True)
        self.lm_head = nn.Linear(cfg.d_model, cfg.vocab_size, bias=False)

    def forward(self, ids):
        return self.lm_head(self.block(self.wte(ids)))


def main(cfg: TrainConfig) -> None:
    torch.cuda.set_device(f"cuda:{get_local_rank()}")
    device = torch.device("cuda", get_local_rank())
    model = TinyLM(cfg).to(device)
    if cfg.distributed_strategy == "ddp":
        dist_model = DDP(model, device_ids=[get_local_rank()])
    else:
        dist_model = FSDP(model, device_id=get_local_rank())
    data = TensorDataset(torch.randint(0, cfg.vocab_size, (100_000, cfg.seq_len + 1)))
    sampler = DistributedSampler(data, seed=6198)
    loader = DataLoader(data, batch_size=cfg.micro_batch_size, sampler=sampler, drop_last=True)
    optim = torch.optim.AdamW(dist_model.parameters(), lr=cfg.lr)
    step, epoch = 0, 0
    while step < cfg.max_steps:
        sampler.set_epoch(epoch)
        for (batch,) in loader:
            batch = batch.to(device)
            logits = dist_model(batch[:, :-1])
            loss = nn.functional.cross_entropy(logits.flatten(0, 1), batch[:, 1:].flatten())
            optim.zero_grad(set_to_none=True)
            loss.backward()
            optim.step()
            step += 1
            if get_global_rank() == 0 and step % 10 == 0:
                log.info("step %d loss %.4f", step, loss.item())
            if step >= cfg.max_steps:
                break
        epoch += 1


if __name__ == "__main__":
    dist.init_process_group(backend="nccl", timeout=timedelta(minutes=30))
    log.info("Process group initialized")
    logging.basicConfig(level=logging.INFO if get_global_rank() == 0 else logging.WARN, stream=sys.stdout)
    main(TrainConfig())
    dist.destroy_process_group()
