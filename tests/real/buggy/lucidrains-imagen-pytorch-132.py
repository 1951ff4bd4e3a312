# expect: hardcoded-cuda0
# source: https://github.com/lucidrains/imagen-pytorch/pull/132
# reason: The Accelerate-based trainer's load() read the checkpoint with torch.load(path) and no map_location, so each of the launched processes restored the tensors onto the GPU they were saved from (cuda:0) and GPU 0 carried an extra copy per process; the merged fix loads to the CPU first (map_location='cpu').
from pathlib import Path

import torch
import torch.nn as nn
import torch.nn.functional as F
from accelerate import Accelerator
from torch.utils.data import DataLoader, TensorDataset


class Unet(nn.Module):
    def __init__(self, dim=64):
        super().__init__()
        self.down = nn.Conv2d(3, dim, 3, padding=1)
        self.up = nn.Conv2d(dim, 3, 3, padding=1)

    def forward(self, images):
        return self.up(F.silu(self.down(images)))


class ImagenTrainer(nn.Module):
    def __init__(self, unet, lr=1e-4, **accelerate_kwargs):
        super().__init__()
        self.accelerator = Accelerator(**accelerate_kwargs)
        self.unet = unet
        self.optim = torch.optim.Adam(unet.parameters(), lr=lr)
        self.steps = 0
        self.unet, self.optim = self.accelerator.prepare(self.unet, self.optim)

    @property
    def is_main(self):
        return self.accelerator.is_main_process

    def save(self, path):
        self.accelerator.wait_for_everyone()
        if not self.is_main:
            return
        unet = self.accelerator.unwrap_model(self.unet)
        save_obj = dict(model=unet.state_dict(), optim=self.optim.state_dict(), steps=self.steps)
        torch.save(save_obj, str(path))

    def load(self, path):
        path = Path(path)
        assert path.exists(), f"{path} does not exist"
        loaded_obj = torch.load(str(path))
        self.accelerator.unwrap_model(self.unet).load_state_dict(loaded_obj["model"])
        self.optim.load_state_dict(loaded_obj["optim"])
        self.steps = loaded_obj["steps"]
        return loaded_obj

    def train_step(self, images):
        noise = torch.randn_like(images)
        loss = F.mse_loss(self.unet(images + noise), images)
        self.accelerator.backward(loss)
        self.optim.step()
        self.optim.zero_grad()
        self.steps += 1
        return loss.item()


def main(checkpoint="./imagen.pt", epochs=3):
    trainer = ImagenTrainer(Unet())
    if Path(checkpoint).exists():
        trainer.load(checkpoint)
    images = torch.randn(256, 3, 32, 32)
    loader = trainer.accelerator.prepare(DataLoader(TensorDataset(images), batch_size=16, shuffle=True))
    for _ in range(epochs):
        for (batch,) in loader:
            loss = trainer.train_step(batch)
        if trainer.is_main:
            print(f"step {trainer.steps}: loss {loss:.4f}")
        trainer.save(checkpoint)


if __name__ == "__main__":
    main()
