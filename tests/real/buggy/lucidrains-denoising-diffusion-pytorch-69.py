# expect: missing-distributed-sampler
# source: https://github.com/lucidrains/denoising-diffusion-pytorch/issues/69
# reason: The trainer turned its DataLoader into an endless generator before handing it to accelerator.prepare, which returns a generator unchanged, so every GPU iterated the whole dataset unsplit; preparing the DataLoader first and cycling afterwards fixed it (confirmed by the reporter).
import torch
import torch.nn as nn
from accelerate import Accelerator
from torch.utils.data import DataLoader, TensorDataset


def cycle(loader):
    while True:
        for batch in loader:
            yield batch


class DiffusionTrainer:
    def __init__(self, model, images, batch_size=32, lr=1e-4, num_steps=100_000):
        self.accelerator = Accelerator(split_batches=True)
        self.num_steps = num_steps
        loader = DataLoader(TensorDataset(images), batch_size=batch_size, shuffle=True, pin_memory=True)
        self.dl = cycle(loader)
        self.opt = torch.optim.Adam(model.parameters(), lr=lr)
        self.model, self.opt, self.dl = self.accelerator.prepare(model, self.opt, self.dl)

    def train(self):
        for step in range(self.num_steps):
            (images,) = next(self.dl)
            noise = torch.randn_like(images)
            loss = nn.functional.mse_loss(self.model(images + noise), noise)
            self.accelerator.backward(loss)
            self.opt.step()
            self.opt.zero_grad()
            if self.accelerator.is_main_process and step % 1000 == 0:
                print(f"step {step}: loss {loss.item():.4f}")


if __name__ == "__main__":
    unet = nn.Sequential(nn.Conv2d(3, 64, 3, padding=1), nn.SiLU(), nn.Conv2d(64, 3, 3, padding=1))
    DiffusionTrainer(unet, torch.randn(5000, 3, 32, 32)).train()
