# expect: grad-accum-without-no-sync
# source: https://github.com/lucidrains/alphafold3-pytorch/pull/23
# reason: The Fabric-based Trainer accumulated gradients over grad_accum_every micro-batches, calling fabric.backward() on each, with no fabric.no_backward_sync(); under the DDP strategy every micro-batch's backward all-reduced the gradients although the optimizer stepped once per group; the merged fix wraps forward and backward in fabric.no_backward_sync(self.model, enabled=is_accumulating).
from functools import partial

import torch
import torch.nn as nn
from lightning import Fabric
from torch.optim import Adam
from torch.optim.lr_scheduler import LambdaLR
from torch.utils.data import DataLoader, Dataset


def exists(v):
    return v is not None


def default(v, d):
    return v if exists(v) else d


def cycle(dl):
    while True:
        for batch in dl:
            yield batch


def default_lambda_lr_fn(steps, warmup=1000):
    return min(1.0, steps / warmup)


class PairformerLite(nn.Module):
    def __init__(self, dim=128, depth=4):
        super().__init__()
        self.embed = nn.Linear(32, dim)
        self.layers = nn.ModuleList([nn.TransformerEncoderLayer(dim, 8, dim * 4, batch_first=True) for _ in range(depth)])
        self.to_coords = nn.Linear(dim, 3)

    def forward(self, atom_inputs, atom_pos):
        x = self.embed(atom_inputs)
        for layer in self.layers:
            x = layer(x)
        return nn.functional.mse_loss(self.to_coords(x), atom_pos)


class AtomDataset(Dataset):
    def __init__(self, num_examples=4096, atoms=64):
        self.inputs = torch.randn(num_examples, atoms, 32)
        self.positions = torch.randn(num_examples, atoms, 3)

    def __len__(self):
        return len(self.inputs)

    def __getitem__(self, idx):
        return dict(atom_inputs=self.inputs[idx], atom_pos=self.positions[idx])


class Trainer:
    def __init__(
        self,
        model,
        *,
        dataset,
        num_train_steps,
        batch_size,
        grad_accum_every=1,
        valid_every=1000,
        lr=1e-4,
        clip_grad_norm=10.0,
        accelerator="auto",
        fabric=None,
        fabric_kwargs=None,
    ):
        fabric_kwargs = default(fabric_kwargs, dict())
        if not exists(fabric):
            fabric = Fabric(accelerator=accelerator, **fabric_kwargs)
        self.fabric = fabric
        fabric.launch()

        optimizer = Adam(model.parameters(), lr=lr)
        self.model, self.optimizer = fabric.setup(model, optimizer)
        self.scheduler = LambdaLR(self.optimizer, lr_lambda=partial(default_lambda_lr_fn))

        dataloader = DataLoader(dataset, batch_size=batch_size, shuffle=True, drop_last=True)
        self.dataloader = fabric.setup_dataloaders(dataloader)

        self.num_train_steps = num_train_steps
        self.grad_accum_every = grad_accum_every
        self.clip_grad_norm = clip_grad_norm
        self.valid_every = valid_every
        self.steps = 0

    @property
    def is_main(self):
        return self.fabric.global_rank == 0

    def print(self, *args, **kwargs):
        self.fabric.print(*args, **kwargs)

    def __call__(self):
        dl = cycle(self.dataloader)
        while self.steps < self.num_train_steps:
            for _ in range(self.grad_accum_every):
                inputs = next(dl)
                loss = self.model(**inputs)
                self.fabric.backward(loss / self.grad_accum_every)

            self.print(f"loss: {loss.item():.3f}")
            self.fabric.clip_gradients(self.model, self.optimizer, max_norm=self.clip_grad_norm)
            self.optimizer.step()
            self.scheduler.step()
            self.optimizer.zero_grad()
            self.steps += 1

        self.print("training complete")


if __name__ == "__main__":
    trainer = Trainer(
        PairformerLite(),
        dataset=AtomDataset(),
        num_train_steps=10000,
        batch_size=4,
        grad_accum_every=16,
        fabric_kwargs=dict(devices=8, strategy="ddp"),
    )
    trainer()
