# expect:
# seen-in: https://github.com/allenai/OLMo/blob/59a53e3f68e546330ca5a99ec626e58f9ab96494/scripts/train.py
# A debug forward hook that saves module outputs is defined after an early return off rank 0 and registered through
# functools.partial: the closure exists, so writes, on rank 0 only.
import functools
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel


class Trainer:
    def __init__(self, trace_steps=None):
        self.local_rank = int(os.environ["LOCAL_RANK"])
        torch.cuda.set_device(self.local_rank)
        dist.init_process_group("nccl")
        self.model = DistributedDataParallel(nn.Sequential(nn.Linear(8, 8), nn.ReLU()).cuda(),
                                             device_ids=[self.local_rank])
        self.optimizer = torch.optim.AdamW(self.model.parameters(), lr=1e-3)
        self.trace_steps = trace_steps or []

    def output_trace_hooks(self, step):
        if step not in self.trace_steps:
            return []
        if dist.get_rank() != 0:
            return []
        folder = f"traces/step{step}"
        os.makedirs(folder, exist_ok=True)

        def save_output(name, module, inputs, output):
            torch.save(output.detach().cpu(), os.path.join(folder, f"{name}.pt"))

        return [module.register_forward_hook(functools.partial(save_output, name))
                for name, module in self.model.named_modules()]

    def fit(self, steps=100):
        for step in range(steps):
            hooks = self.output_trace_hooks(step)
            loss = self.model(torch.randn(16, 8, device="cuda")).square().mean()
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()
            for hook in hooks:
                hook.remove()
        dist.destroy_process_group()


if __name__ == "__main__":
    Trainer(trace_steps=[10]).fit()
