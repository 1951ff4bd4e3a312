# expect: hardcoded-cuda0
# source: https://github.com/lucidrains/denoising-diffusion-pytorch/issues/146
# reason: Launched with accelerate on several GPUs, the training script moved the Unet and the GaussianDiffusion wrapper to the GPU with a bare .cuda() before the trainer's Accelerator picked each process's device, so every process allocated its copy on the first GPU and GPU memory was badly imbalanced; the reporter's own fix drops the .cuda() calls and lets accelerator.prepare() place the model.
import torch
import torch.nn as nn
import torch.nn.functional as F
from accelerate import Accelerator
from torch.utils.data import DataLoader, TensorDataset


class Unet(nn.Module):
    def __init__(self, dim=64, channels=3):
        super().__init__()
        self.inp = nn.Conv2d(channels, dim, 3, padding=1)
        self.out = nn.Conv2d(dim, channels, 3, padding=1)

    def forward(self, x, t):
        return self.out(F.silu(self.inp(x)))


class GaussianDiffusion(nn.Module):
    def __init__(self, model, image_size=32, timesteps=1000):
        super().__init__()
        self.model = model
        self.image_size = image_size
        self.num_timesteps = timesteps
        self.register_buffer("betas", torch.linspace(1e-4, 0.02, timesteps))

    def forward(self, img):
        t = torch.randint(0, self.num_timesteps, (img.shape[0],), device=img.device)
        noise = torch.randn_like(img)
        noisy = img + self.betas[t].view(-1, 1, 1, 1) * noise
        return F.l1_loss(self.model(noisy, t), noise)


class Trainer:
    def __init__(self, diffusion_model, train_batch_size=16, train_lr=1e-4, train_num_steps=100000):
        self.accelerator = Accelerator(split_batches=True, mixed_precision="no")
        self.model = diffusion_model
        self.train_num_steps = train_num_steps
        data = TensorDataset(torch.randn(1024, 3, diffusion_model.image_size, diffusion_model.image_size))
        dl = DataLoader(data, batch_size=train_batch_size, shuffle=True, pin_memory=True)
        self.opt = torch.optim.Adam(diffusion_model.parameters(), lr=train_lr)
        self.model, self.opt, dl = self.accelerator.prepare(self.model, self.opt, dl)
        self.dl = dl

    def train(self):
        step = 0
        while step < self.train_num_steps:
            for (images,) in self.dl:
                loss = self.model(images)
                self.accelerator.backward(loss)
                self.opt.step()
                self.opt.zero_grad()
                if self.accelerator.is_main_process and step % 100 == 0:
                    print(f"step {step} loss {loss.item():.4f}")
                step += 1


model = Unet(dim=64).cuda()
diffusion = GaussianDiffusion(model, image_size=32, timesteps=1000).cuda()
trainer = Trainer(diffusion, train_batch_size=32, train_lr=8e-5, train_num_steps=700000)
trainer.train()
