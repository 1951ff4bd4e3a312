# expect: grad-accum-without-no-sync
# source: https://github.com/speechbrain/speechbrain/pull/1449
# reason: Brain.fit_batch accumulated gradients over grad_accumulation_factor batches but every backward on the DDP-wrapped modules synchronised gradients; the merged PR adds a no_sync context on the non-stepping batches (10-20% faster with DDP).
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


class Brain:
    def __init__(self, modules, opt_class, hparams, run_opts):
        self.device = run_opts["device"]
        self.modules = nn.ModuleDict(modules).to(self.device)
        self.hparams = hparams
        self.grad_accumulation_factor = hparams.get("grad_accumulation_factor", 1)
        self.step = 0
        if run_opts.get("distributed_launch"):
            for name, module in self.modules.items():
                if any(p.requires_grad for p in module.parameters()):
                    self.modules[name] = DDP(module, device_ids=[self.device])
        self.optimizer = opt_class(self.modules.parameters())

    def compute_forward(self, batch):
        feats, _ = batch
        return self.modules["decoder"](self.modules["encoder"](feats.to(self.device)))

    def compute_objectives(self, predictions, batch):
        _, targets = batch
        return nn.functional.cross_entropy(predictions, targets.to(self.device))

    def fit_batch(self, batch):
        self.step += 1
        should_step = self.step % self.grad_accumulation_factor == 0
        outputs = self.compute_forward(batch)
        loss = self.compute_objectives(outputs, batch)
        (loss / self.grad_accumulation_factor).backward()
        if should_step:
            self.optimizer.step()
            self.optimizer.zero_grad()
        return loss.detach()

    def fit(self, epoch_counter, train_set, batch_size):
        sampler = DistributedSampler(train_set)
        loader = DataLoader(train_set, batch_size=batch_size, sampler=sampler)
        for epoch in epoch_counter:
            sampler.set_epoch(epoch)
            for batch in loader:
                self.fit_batch(batch)


if __name__ == "__main__":
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    brain = Brain({"encoder": nn.Linear(80, 256), "decoder": nn.Linear(256, 40)},
                  lambda params: torch.optim.Adam(params, lr=1e-3), {"grad_accumulation_factor": 4},
                  {"device": f"cuda:{local_rank}", "distributed_launch": True})
    brain.fit(range(30), TensorDataset(torch.randn(10000, 80), torch.randint(0, 40, (10000,))), batch_size=8)
