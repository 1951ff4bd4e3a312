# expect: checkpoint-without-module
# source: https://github.com/nerfstudio-project/nerfstudio/pull/1682
# reason: With DDP the pipeline held the DistributedDataParallel wrapper as its _model, so the saved pipeline state had "_model.module." keys that a non-DDP pipeline could not load; the merged fix strips the extra "module." on load.
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


class NerfModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.field = nn.Sequential(nn.Linear(63, 256), nn.ReLU(), nn.Linear(256, 4))

    def forward(self, rays):
        return self.field(rays)


class Pipeline(nn.Module):
    def __init__(self, device, world_size, local_rank):
        super().__init__()
        self._model = NerfModel().to(device)
        self.world_size = world_size
        if world_size > 1:
            self._model = DDP(self._model, device_ids=[local_rank], find_unused_parameters=True)

    def get_train_loss_dict(self, rays, target):
        return {"rgb": nn.functional.mse_loss(self._model(rays), target)}

    def load_pipeline(self, loaded_state):
        state = {key[len("_model."):]: value for key, value in loaded_state.items() if key.startswith("_model.")}
        self._model.load_state_dict(state)


class Trainer:
    def __init__(self, local_rank, world_size):
        self.device = torch.device("cuda", local_rank)
        self.pipeline = Pipeline(self.device, world_size, local_rank)
        self.optimizer = torch.optim.Adam(self.pipeline.parameters(), lr=5e-4)

    def save_checkpoint(self, step, path):
        torch.save({"step": step, "pipeline": self.pipeline.state_dict(),
                    "optimizers": self.optimizer.state_dict()}, os.path.join(path, f"step-{step:09d}.ckpt"))

    def train(self, steps, path):
        for step in range(steps):
            rays = torch.randn(4096, 63, device=self.device)
            loss = sum(self.pipeline.get_train_loss_dict(rays, torch.rand(4096, 4, device=self.device)).values())
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()
            if step % 2000 == 0 and dist.get_rank() == 0:
                self.save_checkpoint(step, path)


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    Trainer(local_rank, dist.get_world_size()).train(30000, "outputs")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
