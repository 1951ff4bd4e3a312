# expect:
# seen-in: https://github.com/huggingface/lerobot/blob/7427f31801f944f5ec9ce53cda02862ce7d1638b/src/lerobot/scripts/lerobot_train.py
# The Accelerator is built by a factory of the project's own package and imported only under TYPE_CHECKING for
# the annotations: the script runs under Accelerate, which shards the loader it prepares.
from typing import TYPE_CHECKING

import torch
import torch.nn as nn

from policy_lib.distributed import make_accelerator

if TYPE_CHECKING:
    from accelerate import Accelerator


def update_policy(policy: nn.Module, batch: torch.Tensor, optimizer: torch.optim.Optimizer,
                  accelerator: "Accelerator") -> float:
    loss = policy(batch).pow(2).mean()
    accelerator.backward(loss)
    optimizer.step()
    optimizer.zero_grad()
    return loss.item()


def train(steps: int = 100) -> None:
    accelerator = make_accelerator()
    policy = nn.Sequential(nn.Linear(16, 64), nn.ReLU(), nn.Linear(64, 4))
    optimizer = torch.optim.AdamW(policy.parameters(), lr=1e-4)
    loader = torch.utils.data.DataLoader(torch.randn(1024, 16), batch_size=32, shuffle=True)
    policy, optimizer, loader = accelerator.prepare(policy, optimizer, loader)
    step = 0
    while step < steps:
        for batch in loader:
            loss = update_policy(policy, batch, optimizer, accelerator)
            step += 1
            if accelerator.is_main_process and step % 10 == 0:
                print(f"step {step} loss {loss:.4f}")
            if step >= steps:
                break
    accelerator.end_training()


if __name__ == "__main__":
    train()
