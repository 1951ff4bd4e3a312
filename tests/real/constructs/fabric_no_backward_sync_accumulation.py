# expect:
# seen-in: https://github.com/Lightning-AI/litgpt/blob/26857050fe3ff627cd714fe92f5838f51a3d5efa/litgpt/finetune/lora.py
# Gradient accumulation under Fabric: the non-final micro-steps run inside fabric.no_backward_sync(model,
# enabled=is_accumulating), Fabric's no_sync, so only the last micro-step all-reduces.
import torch
import torch.nn as nn
import lightning as L
from torch.utils.data import DataLoader, TensorDataset


def main(accumulation=4):
    fabric = L.Fabric(strategy="ddp", devices=2)
    fabric.launch()
    model = fabric.setup(nn.Linear(8, 1))
    optimizer = fabric.setup_optimizers(torch.optim.AdamW(model.parameters(), lr=1e-3))
    loader = fabric.setup_dataloaders(DataLoader(TensorDataset(torch.randn(512, 8), torch.randn(512, 1)),
                                                 batch_size=8, shuffle=True))
    for step, (x, y) in enumerate(loader):
        is_accumulating = (step + 1) % accumulation != 0
        with fabric.no_backward_sync(model, enabled=is_accumulating):
            loss = nn.functional.mse_loss(model(x), y)
            fabric.backward(loss / accumulation)
        if not is_accumulating:
            optimizer.step()
            optimizer.zero_grad()
        if fabric.is_global_zero and step % 100 == 0:
            fabric.print(f"step {step} loss {loss.item():.4f}")


if __name__ == "__main__":
    main()
