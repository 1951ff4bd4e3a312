# expect: checkpoint-without-module
# source: https://github.com/hpcaitech/ColossalAI/issues/768
# reason: A checkpoint hook saved the state_dict of the DDP-wrapped model, so every key carried the "module." prefix and loading it into the plain (pipeline) model failed; the maintainers confirmed the DDP prefix as the cause and handled it when loading.
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


class SaveCheckpointHook:
    def __init__(self, checkpoint_dir, interval=1):
        self.checkpoint_dir = checkpoint_dir
        self.interval = interval

    def after_train_epoch(self, trainer):
        if trainer.epoch % self.interval == 0 and dist.get_rank() == 0:
            os.makedirs(self.checkpoint_dir, exist_ok=True)
            save_checkpoint(os.path.join(self.checkpoint_dir, f"epoch{trainer.epoch}.pt"),
                            trainer.epoch, trainer.engine.model, trainer.engine.optimizer)


def save_checkpoint(path, epoch, model, optimizer):
    torch.save({"epoch": epoch, "model": model.state_dict(), "optimizer": optimizer.state_dict()}, path)


def load_checkpoint(path, model):
    state = torch.load(path, map_location="cpu")
    model.load_state_dict(state["model"])
    return state["epoch"]


class Engine:
    def __init__(self, model, optimizer):
        self.model, self.optimizer = model, optimizer


class Trainer:
    def __init__(self, engine, hooks):
        self.engine, self.hooks, self.epoch = engine, hooks, 0

    def fit(self, loader, sampler, epochs):
        for self.epoch in range(epochs):
            sampler.set_epoch(self.epoch)
            for x, y in loader:
                loss = nn.functional.cross_entropy(self.engine.model(x.cuda()), y.cuda())
                self.engine.optimizer.zero_grad()
                loss.backward()
                self.engine.optimizer.step()
            for hook in self.hooks:
                hook.after_train_epoch(self)


def build_model():
    return nn.Sequential(nn.Linear(128, 256), nn.GELU(), nn.Linear(256, 256), nn.GELU(), nn.Linear(256, 10))


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    model = DDP(build_model().cuda(), device_ids=[local_rank])
    dataset = TensorDataset(torch.randn(4096, 128), torch.randint(0, 10, (4096,)))
    sampler = DistributedSampler(dataset)
    engine = Engine(model, torch.optim.Adam(model.parameters(), lr=1e-3))
    Trainer(engine, [SaveCheckpointHook("./ckpt")]).fit(DataLoader(dataset, batch_size=32, sampler=sampler), sampler, 3)
    dist.barrier()
    pipeline_model = build_model()
    load_checkpoint("./ckpt/epoch2.pt", pipeline_model)


if __name__ == "__main__":
    main()
