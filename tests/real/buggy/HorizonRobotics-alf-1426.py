# expect: batchnorm-not-synced
# source: https://github.com/HorizonRobotics/alf/pull/1426
# reason: ALF's multi-GPU mode spawns one process per GPU and wraps the algorithm's networks in DistributedDataParallel, but the BatchNorm layers of its conv encoders were left as they were, so each GPU normalised with statistics from its own small slice of the batch and the running statistics drifted apart across replicas; the merged PR converts the BatchNorm layers to SyncBatchNorm before the DDP wrap in multi-GPU training.
import argparse
import os

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


def conv_encoder(in_channels=3, width=32):
    return nn.Sequential(
        nn.Conv2d(in_channels, width, 3, stride=2, padding=1), nn.BatchNorm2d(width), nn.ReLU(),
        nn.Conv2d(width, width * 2, 3, stride=2, padding=1), nn.BatchNorm2d(width * 2), nn.ReLU(),
        nn.AdaptiveAvgPool2d(1), nn.Flatten(),
    )


class ActorCritic(nn.Module):
    def __init__(self, num_actions=6):
        super().__init__()
        self.encoder = conv_encoder()
        self.policy = nn.Linear(64, num_actions)
        self.value = nn.Linear(64, 1)

    def forward(self, obs):
        feat = self.encoder(obs)
        return self.policy(feat), self.value(feat).squeeze(-1)


class Trainer:
    def __init__(self, rank, world_size, args):
        self.rank = rank
        self.device = torch.device("cuda", rank)
        torch.cuda.set_device(self.device)
        torch.manual_seed(args.seed)
        net = ActorCritic().to(self.device)
        self.net = DDP(net, device_ids=[rank])
        torch.manual_seed(args.seed + rank)  # each worker collects its own experience
        self.optimizer = torch.optim.Adam(self.net.parameters(), lr=args.lr)
        self.iterations = args.iterations
        self.mini_batch = args.mini_batch

    def rollout(self):
        obs = torch.rand(self.mini_batch, 3, 64, 64, device=self.device)
        returns = torch.randn(self.mini_batch, device=self.device)
        actions = torch.randint(0, 6, (self.mini_batch,), device=self.device)
        return obs, actions, returns

    def train_iter(self):
        obs, actions, returns = self.rollout()
        logits, values = self.net(obs)
        log_prob = torch.log_softmax(logits, -1).gather(1, actions[:, None]).squeeze(1)
        advantage = (returns - values).detach()
        loss = -(log_prob * advantage).mean() + 0.5 * (returns - values).pow(2).mean()
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        return loss.item()

    def run(self):
        for it in range(self.iterations):
            loss = self.train_iter()
            if self.rank == 0 and it % 50 == 0:
                print(f"iter {it} loss {loss:.3f}")


def worker(rank, world_size, args):
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "12355")
    dist.init_process_group("nccl", rank=rank, world_size=world_size)
    try:
        Trainer(rank, world_size, args).run()
    finally:
        dist.destroy_process_group()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--iterations", type=int, default=1000)
    parser.add_argument("--mini_batch", type=int, default=16)
    parser.add_argument("--lr", type=float, default=3e-4)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    gpus = torch.cuda.device_count()
    mp.spawn(worker, args=(gpus, args), nprocs=gpus, join=True)
