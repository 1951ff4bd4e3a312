# expect: unused-parameters-error
# source: https://github.com/lucidrains/recurrent-interface-network-pytorch/pull/16
# reason: Trained with Accelerate on several GPUs, the diffusion trainer crashed with "Expected to have finished reduction in the prior iteration before starting a new one": the network's latent self-conditioning projection only runs when a random draw decides to self-condition this step (otherwise no latents are passed and the projection gets no gradient), so DDP waited for gradients that never came; the merged PR passes DistributedDataParallelKwargs(find_unused_parameters=True) to the Accelerator.
import math
from random import random

import torch
import torch.nn as nn
import torch.nn.functional as F
from accelerate import Accelerator
from torch.utils.data import DataLoader, TensorDataset


def exists(x):
    return x is not None


class FeedForward(nn.Module):
    def __init__(self, dim, mult=4):
        super().__init__()
        self.net = nn.Sequential(nn.LayerNorm(dim), nn.Linear(dim, dim * mult), nn.GELU(), nn.Linear(dim * mult, dim))

    def forward(self, x):
        return self.net(x)


class RINBlock(nn.Module):
    def __init__(self, dim, dim_latent, heads=4):
        super().__init__()
        self.latents_attend_to_patches = nn.MultiheadAttention(dim_latent, heads, kdim=dim, vdim=dim, batch_first=True)
        self.latent_ff = FeedForward(dim_latent)
        self.patches_attend_to_latents = nn.MultiheadAttention(dim, heads, kdim=dim_latent, vdim=dim_latent,
                                                               batch_first=True)
        self.patch_ff = FeedForward(dim)

    def forward(self, patches, latents):
        latents = latents + self.latents_attend_to_patches(latents, patches, patches)[0]
        latents = latents + self.latent_ff(latents)
        patches = patches + self.patches_attend_to_latents(patches, latents, latents)[0]
        return patches + self.patch_ff(patches), latents


class RIN(nn.Module):
    def __init__(self, dim=256, image_size=32, patch_size=4, channels=3, num_latents=64, dim_latent=512, depth=4):
        super().__init__()
        self.patch_size = patch_size
        patch_dim = channels * 2 * patch_size ** 2
        self.to_patches = nn.Linear(patch_dim, dim)
        self.pos_emb = nn.Parameter(torch.randn((image_size // patch_size) ** 2, dim))
        self.time_mlp = nn.Sequential(nn.Linear(1, dim_latent), nn.GELU(), nn.Linear(dim_latent, dim_latent))
        self.latents = nn.Parameter(torch.randn(num_latents, dim_latent))
        self.init_self_cond_latents = nn.Sequential(FeedForward(dim_latent), nn.LayerNorm(dim_latent))
        self.blocks = nn.ModuleList([RINBlock(dim, dim_latent) for _ in range(depth)])
        self.to_pixels = nn.Linear(dim, channels * patch_size ** 2)

    def patchify(self, x):
        p = self.patch_size
        b, c, h, w = x.shape
        x = x.unfold(2, p, p).unfold(3, p, p)
        return x.permute(0, 2, 3, 1, 4, 5).reshape(b, (h // p) * (w // p), c * p * p)

    def unpatchify(self, x, shape):
        b, c, h, w = shape
        p = self.patch_size
        x = x.reshape(b, h // p, w // p, c, p, p).permute(0, 3, 1, 4, 2, 5)
        return x.reshape(b, c, h, w)

    def forward(self, x, time, x_self_cond=None, latent_self_cond=None, return_latents=False):
        batch = x.shape[0]
        x_self_cond = x_self_cond if exists(x_self_cond) else torch.zeros_like(x)
        patches = self.to_patches(self.patchify(torch.cat((x_self_cond, x), dim=1))) + self.pos_emb
        latents = self.latents.unsqueeze(0).expand(batch, -1, -1)
        if exists(latent_self_cond):
            latents = latents + self.init_self_cond_latents(latent_self_cond)
        latents = latents + self.time_mlp(time.view(batch, 1)).unsqueeze(1)
        for block in self.blocks:
            patches, latents = block(patches, latents)
        out = self.unpatchify(self.to_pixels(patches), x.shape)
        return (out, latents) if return_latents else out


class GaussianDiffusion(nn.Module):
    def __init__(self, model, train_prob_self_cond=0.9):
        super().__init__()
        self.model = model
        self.train_prob_self_cond = train_prob_self_cond

    def forward(self, img):
        times = torch.rand(img.shape[0], device=img.device)
        noise = torch.randn_like(img)
        alpha = torch.cos(times * math.pi / 2).view(-1, 1, 1, 1)
        noised = alpha * img + (1 - alpha ** 2).sqrt() * noise
        self_cond = self_latents = None
        if random() < self.train_prob_self_cond:
            with torch.no_grad():
                self_cond, self_latents = self.model(noised, times, return_latents=True)
                self_cond, self_latents = self_cond.detach(), self_latents.detach()
        pred = self.model(noised, times, self_cond, self_latents)
        return F.mse_loss(pred, img)


class Trainer:
    def __init__(self, diffusion, dataset, train_batch_size=32, lr=1e-4, train_num_steps=100000, save_every=1000):
        self.accelerator = Accelerator(mixed_precision="fp16")
        self.train_num_steps, self.save_every = train_num_steps, save_every
        dl = DataLoader(dataset, batch_size=train_batch_size, shuffle=True, drop_last=True, num_workers=4)
        opt = torch.optim.Adam(diffusion.parameters(), lr=lr)
        self.model, self.opt, self.dl = self.accelerator.prepare(diffusion, opt, dl)

    def train(self):
        step = 0
        while step < self.train_num_steps:
            for (img,) in self.dl:
                with self.accelerator.autocast():
                    loss = self.model(img)
                self.accelerator.backward(loss)
                self.accelerator.clip_grad_norm_(self.model.parameters(), 1.0)
                self.opt.step()
                self.opt.zero_grad()
                step += 1
                if self.accelerator.is_main_process and step % self.save_every == 0:
                    self.accelerator.save(self.accelerator.unwrap_model(self.model).state_dict(), f"model-{step}.pt")
                if step >= self.train_num_steps:
                    break


if __name__ == "__main__":
    images = TensorDataset(torch.rand(10000, 3, 32, 32) * 2 - 1)
    Trainer(GaussianDiffusion(RIN()), images).train()
