# expect:
# seen-in: https://github.com/OpenGVLab/InternImage/blob/31c962dc6c1ceb23e580772f7daaa6944694fbe6/classification/main_accelerate.py
# The Accelerate entry point defines and calls its own save_checkpoint; the helper module it imports for other
# names has a namesake save_checkpoint (used by another entry point) that this run never reaches.
import torch
import torch.nn as nn
from accelerate import Accelerator
from torch.utils.data import DataLoader, TensorDataset

from utils import load_pretrained


def save_checkpoint(accelerator, path):
    accelerator.save_state(path)


def main():
    accelerator = Accelerator()
    model = load_pretrained(nn.Linear(8, 1))
    optimizer = torch.optim.AdamW(model.parameters())
    loader = DataLoader(TensorDataset(torch.randn(512, 8), torch.randn(512, 1)), batch_size=16, shuffle=True)
    model, optimizer, loader = accelerator.prepare(model, optimizer, loader)
    for epoch in range(3):
        for x, y in loader:
            loss = nn.functional.mse_loss(model(x), y)
            optimizer.zero_grad()
            accelerator.backward(loss)
            optimizer.step()
        save_checkpoint(accelerator, f"ckpt_{epoch}")


if __name__ == "__main__":
    main()
