# expect: collective-mismatch
# source: https://github.com/tier4/Diffusion-Planner/pull/256
# reason: The training loop called closed_loop_validate() inside `if global_rank == 0:` (next to the rank-0 checkpoint export); that validation builds an evaluation object whose run_distributed() ends in dist.barrier() whenever DDP is active, so under multi-GPU training only rank 0 reached the barrier and the job deadlocked the first time the save cadence fired. The fix moved the cadence check and the call out of the rank-0 guard so every rank joins.
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


class Planner(nn.Module):
    def __init__(self, state_dim=32, horizon=8):
        super().__init__()
        self.horizon = horizon
        self.net = nn.Sequential(nn.Linear(state_dim, 256), nn.GELU(), nn.Linear(256, horizon * 2))

    def forward(self, x):
        return self.net(x).view(x.size(0), self.horizon, 2)


class ClosedLoopEvaluation:
    def __init__(self, scenarios, ddp_rank=0, ddp_world_size=1):
        self.scenarios = scenarios
        self.ddp_rank = ddp_rank
        self.ddp_world_size = ddp_world_size

    def _simulate(self, model, scenario):
        with torch.no_grad():
            plan = model(scenario.unsqueeze(0))
        return float(plan.abs().mean())

    def run_distributed(self, model):
        mine = self.scenarios[self.ddp_rank::self.ddp_world_size]
        scores = [self._simulate(model, s) for s in mine]
        if self.ddp_world_size > 1 and dist.is_initialized():
            dist.barrier()
        return sum(scores) / max(len(scores), 1)


def closed_loop_validate(model, scenarios, global_rank, world_size):
    evaluation = ClosedLoopEvaluation(scenarios, ddp_rank=global_rank, ddp_world_size=world_size)
    return evaluation.run_distributed(model)


def model_training(args):
    dist.init_process_group(backend="nccl")
    global_rank = dist.get_rank()
    world_size = dist.get_world_size()
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    device = torch.device(f"cuda:{local_rank}")

    model = DDP(Planner().to(device), device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)
    data = TensorDataset(torch.randn(4096, 32), torch.randn(4096, 8, 2))
    sampler = DistributedSampler(data)
    loader = DataLoader(data, batch_size=args.batch_size, sampler=sampler)
    scenarios = torch.randn(64, 32, device=device)

    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        model.train()
        for states, targets in loader:
            states, targets = states.to(device), targets.to(device)
            loss = nn.functional.smooth_l1_loss(model(states), targets)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()

        if global_rank == 0:
            torch.save(model.module.state_dict(), os.path.join(args.save_dir, "latest.pth"))
            if (epoch + 1) % args.save_utd == 0:
                score = closed_loop_validate(model.module, scenarios, global_rank, world_size)
                print(f"epoch {epoch}: closed-loop score {score:.4f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--lr", type=float, default=5e-4)
    parser.add_argument("--batch_size", type=int, default=64)
    parser.add_argument("--epochs", type=int, default=20)
    parser.add_argument("--save_utd", type=int, default=5)
    parser.add_argument("--save_dir", default="checkpoints")
    model_training(parser.parse_args())
