# expect: hardcoded-cuda0
# source: https://github.com/lucidrains/imagen-pytorch/pull/190
# reason: The trainer's load() read the checkpoint with torch.load and no map_location, so under a multi-GPU accelerate launch every process materialised the saved tensors on the GPU they were saved from before moving them; the merged fix loads onto the CPU first.
import torch
import torch.nn as nn
from accelerate import Accelerator
from torch.utils.data import DataLoader, TensorDataset


class Unet(nn.Module):
    def __init__(self, dim=64):
        super().__init__()
        self.net = nn.Sequential(nn.Conv2d(3, dim, 3, padding=1), nn.SiLU(), nn.Conv2d(dim, 3, 3, padding=1))

    def forward(self, x):
        return self.net(x)


class ImagenTrainer(nn.Module):
    def __init__(self, unet, lr=1e-4):
        super().__init__()
        self.accelerator = Accelerator()
        self.unet = unet
        self.optimizer = torch.optim.Adam(unet.parameters(), lr=lr)
        self.unet, self.optimizer = self.accelerator.prepare(self.unet, self.optimizer)
        self.steps = 0

    def save(self, path):
        self.accelerator.wait_for_everyone()
        if self.accelerator.is_main_process:
            torch.save({"model": self.accelerator.unwrap_model(self.unet).state_dict(), "steps": self.steps}, path)

    def load(self, path):
        loaded_obj = torch.load(path)
        self.accelerator.unwrap_model(self.unet).load_state_dict(loaded_obj["model"])
        self.steps = loaded_obj["steps"]

    def train_step(self, images):
        noise = torch.randn_like(images)
        loss = nn.functional.mse_loss(self.unet(images + noise), noise)
        self.optimizer.zero_grad()
        self.accelerator.backward(loss)
        self.optimizer.step()
        self.steps += 1
        return loss.item()


def main():
    trainer = ImagenTrainer(Unet())
    trainer.load("./checkpoint.pt")
    loader = trainer.accelerator.prepare(DataLoader(TensorDataset(torch.randn(512, 3, 64, 64)), batch_size=8, shuffle=True))
    for epoch in range(10):
        for (images,) in loader:
            trainer.train_step(images)
        trainer.save("./checkpoint.pt")


if __name__ == "__main__":
    main()
