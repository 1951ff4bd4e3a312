# expect: checkpoint-without-module
# Accelerate: torch.save(model.state_dict()) of the prepared model (DDP-wrapped on several GPUs, 'module.' keys).
import torch
import torch.nn as nn
from accelerate import Accelerator
from torch.utils.data import DataLoader, TensorDataset


def main():
    accelerator = Accelerator()
    model = nn.Linear(8, 2)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    loader = DataLoader(TensorDataset(torch.randn(64, 8), torch.randint(0, 2, (64,))), batch_size=8, shuffle=True)
    model, optimizer, loader = accelerator.prepare(model, optimizer, loader)
    for epoch in range(3):
        for x, y in loader:
            loss = nn.functional.cross_entropy(model(x), y)
            accelerator.backward(loss)
            optimizer.step()
            optimizer.zero_grad()
        if accelerator.is_main_process:
            torch.save(model.state_dict(), f"model_{epoch}.pt")


if __name__ == "__main__":
    main()
