# expect: collective-mismatch
# source: https://github.com/nnaisense/bayesian-flow-networks/pull/6
# reason: Validation ran on the main process only through the wrapped (distributed) model, so the other GPUs waited in NCCL until timeout; the maintainer acknowledged the sync issue.
import torch
import torch.nn as nn
from accelerate import Accelerator
from torch.utils.data import DataLoader, TensorDataset


@torch.no_grad()
def validate(model, val_loader):
    model.eval()
    total, n = 0.0, 0
    for x, y in val_loader:
        total += nn.functional.mse_loss(model(x), y, reduction="sum").item()
        n += len(x)
    model.train()
    return total / n


def main(steps=100000, val_every=1000):
    accelerator = Accelerator()
    model = nn.Sequential(nn.Linear(256, 1024), nn.BatchNorm1d(1024), nn.GELU(), nn.Linear(1024, 256))
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    train_loader = DataLoader(TensorDataset(torch.randn(50000, 256), torch.randn(50000, 256)), batch_size=64, shuffle=True)
    val_loader = DataLoader(TensorDataset(torch.randn(5000, 256), torch.randn(5000, 256)), batch_size=256)
    model, optimizer, train_loader = accelerator.prepare(model, optimizer, train_loader)
    step = 0
    while step < steps:
        for x, y in train_loader:
            loss = nn.functional.mse_loss(model(x), y)
            accelerator.backward(loss)
            optimizer.step()
            optimizer.zero_grad()
            step += 1
            if step % val_every == 0 and accelerator.is_main_process:
                val_x = validate(model, [(a.to(accelerator.device), b.to(accelerator.device)) for a, b in val_loader])
                accelerator.print(f"step {step} val {val_x:.4f}")


if __name__ == "__main__":
    main()
