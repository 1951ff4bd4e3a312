# expect: collective-mismatch
# source: https://github.com/allenai/allennlp/pull/4693
# reason: Training with DeepSpeed hung at the first checkpoint: the trainer called its checkpointer only on the master process, and the checkpointer delegated to the DeepSpeed engine's save_checkpoint, which runs a barrier the other ranks never enter; the author found the `if self._master and self._checkpointer is not None` check to be the culprit and let every rank call the DeepSpeed checkpointer.
import argparse
import os

import deepspeed
import torch
import torch.distributed as dist
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


class DeepspeedCheckpointer:
    def __init__(self, serialization_dir: str):
        self._serialization_dir = serialization_dir

    def save_checkpoint(self, epoch: int, trainer: "DeepspeedTrainer") -> None:
        tag = f"epoch_{epoch}"
        trainer.model_engine.save_checkpoint(self._serialization_dir, tag, client_state={"epoch": epoch})


class DeepspeedTrainer:
    def __init__(self, model_engine, loader, sampler, checkpointer, rank: int):
        self.model_engine = model_engine
        self._loader = loader
        self._sampler = sampler
        self._checkpointer = checkpointer
        self._rank = rank
        self._master = rank == 0

    def _train_epoch(self, epoch: int) -> float:
        self._sampler.set_epoch(epoch)
        total = 0.0
        for tokens, labels in self._loader:
            tokens, labels = tokens.to(self.model_engine.device), labels.to(self.model_engine.device)
            loss = nn.functional.cross_entropy(self.model_engine(tokens), labels)
            self.model_engine.backward(loss)
            self.model_engine.step()
            total += loss.item()
        return total

    def train(self, num_epochs: int) -> None:
        for epoch in range(num_epochs):
            train_loss = self._train_epoch(epoch)
            if self._master:
                print(f"epoch {epoch}: loss {train_loss:.3f}")
            if self._master and self._checkpointer is not None:
                self._checkpointer.save_checkpoint(epoch, self)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--local_rank", type=int, default=-1)
    parser.add_argument("--serialization_dir", default="runs/tagger")
    parser = deepspeed.add_config_arguments(parser)
    args = parser.parse_args()
    deepspeed.init_distributed()
    model = nn.Sequential(nn.EmbeddingBag(30000, 256), nn.Linear(256, 20))
    engine, _, _, _ = deepspeed.initialize(args=args, model=model, model_parameters=model.parameters())
    data = TensorDataset(torch.randint(0, 30000, (10000, 32)), torch.randint(0, 20, (10000,)))
    sampler = DistributedSampler(data)
    loader = DataLoader(data, batch_size=32, sampler=sampler)
    os.makedirs(args.serialization_dir, exist_ok=True)
    trainer = DeepspeedTrainer(engine, loader, sampler, DeepspeedCheckpointer(args.serialization_dir), dist.get_rank())
    trainer.train(num_epochs=5)


if __name__ == "__main__":
    main()
