# expect: missing-set-device
# source: https://github.com/Denys88/rl_games/pull/284
# reason: Multi-GPU continuous A2C under torchrun failed with "NCCL WARN Duplicate GPU detected : rank 1 and rank 0 both on CUDA device": the agent initialised the NCCL process group and broadcast its parameters without torch.cuda.set_device(local_rank), so every process used GPU 0 for the collectives; the merged fix selects the local GPU.
import os

import torch
import torch.distributed as dist
import torch.nn as nn


class A2CBase:
    def __init__(self, base_name, params):
        self.config = params["config"]
        self.multi_gpu = self.config.get("multi_gpu", False)
        self.rank = 0
        self.rank_size = 1
        self.device_name = self.config.get("device_name", "cuda")
        if self.multi_gpu:
            self.local_rank = int(os.getenv("LOCAL_RANK", "0"))
            self.global_rank = int(os.getenv("RANK", "0"))
            self.world_size = int(os.getenv("WORLD_SIZE", "1"))
            dist.init_process_group("nccl", rank=self.global_rank, world_size=self.world_size)
            self.device_name = "cuda:" + str(self.local_rank)
            self.config["device"] = self.device_name
            self.rank = self.global_rank
            self.rank_size = self.world_size
        self.ppo_device = self.config.get("device", "cuda:0")
        self.games_to_track = self.config.get("games_to_track", 100)


class ContinuousA2CBase(A2CBase):
    def __init__(self, base_name, params):
        super().__init__(base_name, params)
        self.model = nn.Sequential(nn.Linear(64, 256), nn.ELU(), nn.Linear(256, 8)).to(self.ppo_device)
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=3e-4)
        if self.multi_gpu:
            model_params = [self.model.state_dict()]
            dist.broadcast_object_list(model_params, 0)
            self.model.load_state_dict(model_params[0])

    def train_epoch(self, obs, actions):
        self.model.train()
        loss = ((self.model(obs) - actions) ** 2).mean()
        self.optimizer.zero_grad()
        loss.backward()
        if self.multi_gpu:
            grads = [p.grad.view(-1) for p in self.model.parameters() if p.grad is not None]
            all_grads = torch.cat(grads)
            dist.all_reduce(all_grads, op=dist.ReduceOp.SUM)
            offset = 0
            for p in self.model.parameters():
                if p.grad is not None:
                    n = p.numel()
                    p.grad.data.copy_(all_grads[offset:offset + n].view_as(p.grad.data) / self.rank_size)
                    offset += n
        self.optimizer.step()
        return loss.item()

    def train(self, max_epochs):
        for epoch in range(max_epochs):
            obs = torch.randn(1024, 64, device=self.ppo_device)
            actions = torch.randn(1024, 8, device=self.ppo_device)
            self.train_epoch(obs, actions)


if __name__ == "__main__":
    agent = ContinuousA2CBase("run", {"config": {"multi_gpu": True}})
    agent.train(1000)
