# expect: checkpoint-without-module
# source: https://github.com/pfnet/pfrl/pull/55
# reason: The agent saved the state_dict of its DistributedDataParallel-wrapped Q-function, so every key began with "module." and loading it into the plain model ("Unexpected key(s) in state_dict: module.model...") failed; the merged fix saves and loads the wrapped module itself.
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel


class QFunction(nn.Module):
    def __init__(self, obs_size, n_actions):
        super().__init__()
        self.model = nn.Sequential(nn.Linear(obs_size, 64), nn.ReLU(), nn.Linear(64, n_actions))

    def forward(self, x):
        return self.model(x)


class DQN:
    saved_attributes = ("model", "optimizer")

    def __init__(self, q_function, optimizer, gamma=0.99):
        self.model = q_function
        self.optimizer = optimizer
        self.gamma = gamma

    def update(self, obs, actions, rewards, next_obs):
        q = self.model(obs).gather(1, actions[:, None]).squeeze(1)
        with torch.no_grad():
            target = rewards + self.gamma * self.model(next_obs).max(1).values
        loss = nn.functional.smooth_l1_loss(q, target)
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()

    def save(self, dirname):
        os.makedirs(dirname, exist_ok=True)
        for attr in self.saved_attributes:
            torch.save(getattr(self, attr).state_dict(), os.path.join(dirname, f"{attr}.pt"))

    def load(self, dirname):
        for attr in self.saved_attributes:
            getattr(self, attr).load_state_dict(torch.load(os.path.join(dirname, f"{attr}.pt"), map_location="cpu"))


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    q_func = DistributedDataParallel(QFunction(4, 2).cuda(), device_ids=[local_rank])
    agent = DQN(q_func, torch.optim.Adam(q_func.parameters(), lr=1e-3))
    for step in range(1000):
        obs, next_obs = torch.randn(32, 4).cuda(), torch.randn(32, 4).cuda()
        agent.update(obs, torch.randint(0, 2, (32,)).cuda(), torch.randn(32).cuda(), next_obs)
    if dist.get_rank() == 0:
        agent.save("results/final")
    dist.destroy_process_group()


def evaluate(dirname):
    """A later, single-process run (``--load``): the plain Q-function meets the saved keys."""
    plain_agent = DQN(QFunction(4, 2), None)
    plain_agent.load(dirname)


if __name__ == "__main__":
    if os.environ.get("LOAD_DIR"):
        evaluate(os.environ["LOAD_DIR"])
    else:
        main()
