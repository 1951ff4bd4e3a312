# expect: no-barrier-before-checkpoint-load
# source: https://github.com/Deci-AI/super-gradients/pull/497
# reason: Validating the final averaged model raced under DDP: rank 0 writes the averaged state dict and the other ranks read it right away, sometimes before it existed ("Incorrect Checkpoint path"); the merged fix makes them wait for rank 0.
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


def read_ckpt_state_dict(path, device):
    if not os.path.exists(path):
        raise ValueError("Incorrect Checkpoint path")
    return torch.load(path, map_location=device)


class ModelWeightAveraging:
    """Keeps the best few epoch snapshots (rank 0 only) and averages them at the end."""

    def __init__(self, ckpt_dir, number_of_models_to_average=5):
        self.ckpt_dir = ckpt_dir
        self.n = number_of_models_to_average
        self.snapshots = []

    def update(self, net, metric):
        self.snapshots.append((metric, {k: v.detach().cpu().clone() for k, v in net.module.state_dict().items()}))
        self.snapshots = sorted(self.snapshots, key=lambda s: s[0])[: self.n]

    def average(self):
        keys = self.snapshots[0][1].keys()
        return {k: sum(sd[k] for _, sd in self.snapshots) / len(self.snapshots) for k in keys}


class Trainer:
    def __init__(self, ckpt_root_dir, local_rank):
        self.device = torch.device("cuda", local_rank)
        self.rank = dist.get_rank()
        self.ckpt_dir = ckpt_root_dir
        os.makedirs(self.ckpt_dir, exist_ok=True)
        net = nn.Sequential(nn.Conv2d(3, 32, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(),
                            nn.Linear(32, 17)).to(self.device)
        self.net = DistributedDataParallel(net, device_ids=[local_rank])
        data = TensorDataset(torch.randn(5000, 3, 64, 64), torch.randint(0, 17, (5000,)))
        self.sampler = DistributedSampler(data)
        self.train_loader = DataLoader(data, batch_size=64, sampler=self.sampler)
        self.valid_loader = DataLoader(TensorDataset(torch.randn(512, 3, 64, 64), torch.randint(0, 17, (512,))),
                                       batch_size=64)
        self.optimizer = torch.optim.SGD(self.net.parameters(), lr=0.1, momentum=0.9)
        self.averaging = ModelWeightAveraging(self.ckpt_dir)

    def _validate(self):
        self.net.eval()
        with torch.no_grad():
            losses = [nn.functional.cross_entropy(self.net(x.to(self.device)), y.to(self.device)).item()
                      for x, y in self.valid_loader]
        self.net.train()
        return sum(losses) / len(losses)

    def _validate_final_average_model(self):
        average_model_ckpt_path = os.path.join(self.ckpt_dir, "average_model.pth")
        average_model_sd = read_ckpt_state_dict(average_model_ckpt_path, self.device)["net"]
        self.net.module.load_state_dict(average_model_sd)
        return self._validate()

    def train(self, max_epochs=30):
        for epoch in range(max_epochs):
            self.sampler.set_epoch(epoch)
            for x, y in self.train_loader:
                loss = nn.functional.cross_entropy(self.net(x.to(self.device)), y.to(self.device))
                self.optimizer.zero_grad()
                loss.backward()
                self.optimizer.step()
            valid_loss = self._validate()
            if self.rank == 0:
                self.averaging.update(self.net, valid_loss)
        if self.rank == 0:
            torch.save({"net": self.averaging.average()}, os.path.join(self.ckpt_dir, "average_model.pth"))
        final = self._validate_final_average_model()
        if self.rank == 0:
            print(f"averaged model valid loss {final:.4f}")


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    Trainer("checkpoints/resnet_imagenette", local_rank).train()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
