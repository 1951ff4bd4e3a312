# expect: missing-distributed-sampler
# source: https://github.com/X-LANCE/SLAM-LLM/issues/93
# reason: Under DeepSpeed the fine-tuning script built its training DataLoader from a kwargs factory that adds a DistributedSampler only when FSDP or DDP is enabled, so with enable_deepspeed the loader had no sampler: every card read the same data and an epoch took N times more steps than the DDP run with the same configuration (the printed loader kwargs showed no sampler); the maintainers fixed the factory in the next code.
import argparse
from dataclasses import dataclass

import deepspeed
import torch
import torch.distributed as dist
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset
from torch.utils.data.distributed import DistributedSampler


@dataclass
class TrainConfig:
    batch_size_training: int = 6
    val_batch_size: int = 6
    num_epochs: int = 3
    enable_fsdp: bool = False
    enable_ddp: bool = False
    enable_deepspeed: bool = True
    batching_strategy: str = "custom"


class SpeechJsonlDataset(Dataset):
    def __init__(self, n=2000, frames=80, dim=40):
        self.feats = torch.randn(n, frames, dim)
        self.targets = torch.randint(0, 500, (n, 16))

    def __len__(self):
        return len(self.feats)

    def __getitem__(self, i):
        return {"audio": self.feats[i], "labels": self.targets[i]}

    @staticmethod
    def collator(samples):
        return {"audio": torch.stack([s["audio"] for s in samples]),
                "labels": torch.stack([s["labels"] for s in samples])}


def get_dataloader_kwargs(train_config, dataset, mode):
    kwargs = {}
    batch_size = train_config.batch_size_training if mode == "train" else train_config.val_batch_size
    if train_config.enable_fsdp or train_config.enable_ddp:
        kwargs["sampler"] = DistributedSampler(dataset, rank=dist.get_rank(),
                                               num_replicas=dist.get_world_size(),
                                               shuffle=mode == "train")
    kwargs["batch_size"] = batch_size
    kwargs["drop_last"] = True
    kwargs["collate_fn"] = dataset.collator
    return kwargs


class Projector(nn.Module):
    def __init__(self, dim=40, vocab=500):
        super().__init__()
        self.encoder = nn.GRU(dim, 128, batch_first=True)
        self.head = nn.Linear(128, vocab)

    def forward(self, audio, labels):
        out, _ = self.encoder(audio)
        logits = self.head(out[:, -labels.shape[1]:])
        return nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), labels.reshape(-1))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--local_rank", type=int, default=-1)
    parser = deepspeed.add_config_arguments(parser)
    args = parser.parse_args()

    deepspeed.init_distributed()
    train_config = TrainConfig()

    model = Projector()
    model_engine, optimizer, _, _ = deepspeed.initialize(args=args, model=model,
                                                         model_parameters=model.parameters())

    dataset_train = SpeechJsonlDataset()
    train_dl_kwargs = get_dataloader_kwargs(train_config, dataset_train, "train")
    train_dataloader = DataLoader(dataset_train, num_workers=2, pin_memory=True, **train_dl_kwargs)

    for epoch in range(train_config.num_epochs):
        model_engine.train()
        for step, batch in enumerate(train_dataloader):
            batch = {k: v.to(model_engine.local_rank) for k, v in batch.items()}
            loss = model_engine(**batch)
            model_engine.backward(loss)
            model_engine.step()


if __name__ == "__main__":
    main()
