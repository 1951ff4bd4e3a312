# expect: collective-mismatch
# source: https://github.com/bghira/SimpleTuner/issues/262
# reason: Multi-GPU SDXL fine-tuning with DeepSpeed hung at the first checkpoint: accelerator.save_state() was called inside `if accelerator.is_main_process:`, but with DeepSpeed every process has to take part in saving (each writes its own shard and they synchronise), so the main process waited forever for the others; the fix calls save_state on every process and keeps only the bookkeeping (pruning old checkpoints) on the main one.
import argparse
import os
import shutil

import torch
import torch.nn as nn
import torch.nn.functional as F
from accelerate import Accelerator
from accelerate.utils import ProjectConfiguration
from torch.utils.data import DataLoader, TensorDataset


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--output_dir", default="output/sdxl")
    parser.add_argument("--train_batch_size", type=int, default=4)
    parser.add_argument("--gradient_accumulation_steps", type=int, default=1)
    parser.add_argument("--learning_rate", type=float, default=1e-6)
    parser.add_argument("--max_train_steps", type=int, default=30000)
    parser.add_argument("--checkpointing_steps", type=int, default=500)
    parser.add_argument("--checkpoints_total_limit", type=int, default=5)
    parser.add_argument("--mixed_precision", default="bf16")
    return parser.parse_args()


class TinyUNet(nn.Module):
    def __init__(self, channels=4, width=128):
        super().__init__()
        self.time_embed = nn.Sequential(nn.Linear(1, width), nn.SiLU(), nn.Linear(width, width))
        self.down = nn.Conv2d(channels, width, 3, 2, 1)
        self.mid = nn.Conv2d(width, width, 3, 1, 1)
        self.up = nn.ConvTranspose2d(width, channels, 4, 2, 1)

    def forward(self, latents, timesteps, text_embeds):
        h = self.down(latents) + self.time_embed(timesteps.float().view(-1, 1))[:, :, None, None]
        h = F.silu(self.mid(h + text_embeds.mean(dim=1)[:, :, None, None]))
        return self.up(h)


def main():
    args = parse_args()
    accelerator = Accelerator(
        gradient_accumulation_steps=args.gradient_accumulation_steps,
        mixed_precision=args.mixed_precision,
        project_config=ProjectConfiguration(project_dir=args.output_dir),
    )
    if accelerator.state.deepspeed_plugin is not None:
        accelerator.state.deepspeed_plugin.deepspeed_config["train_micro_batch_size_per_gpu"] = args.train_batch_size

    unet = TinyUNet()
    optimizer = torch.optim.AdamW(unet.parameters(), lr=args.learning_rate)
    dataset = TensorDataset(torch.randn(2000, 4, 64, 64), torch.randn(2000, 77, 128))
    train_dataloader = DataLoader(dataset, batch_size=args.train_batch_size, shuffle=True, num_workers=4)
    unet, optimizer, train_dataloader = accelerator.prepare(unet, optimizer, train_dataloader)

    global_step = 0
    while global_step < args.max_train_steps:
        for latents, text_embeds in train_dataloader:
            with accelerator.accumulate(unet):
                noise = torch.randn_like(latents)
                timesteps = torch.randint(0, 1000, (latents.shape[0],), device=latents.device)
                noisy = latents + noise * (timesteps.float() / 1000).view(-1, 1, 1, 1)
                loss = F.mse_loss(unet(noisy, timesteps, text_embeds).float(), noise.float())
                accelerator.backward(loss)
                optimizer.step()
                optimizer.zero_grad()
            if accelerator.sync_gradients:
                global_step += 1
                if accelerator.is_main_process:
                    if global_step % args.checkpointing_steps == 0:
                        checkpoints = sorted(d for d in os.listdir(args.output_dir) if d.startswith("checkpoint"))
                        if len(checkpoints) >= args.checkpoints_total_limit:
                            for old in checkpoints[: len(checkpoints) - args.checkpoints_total_limit + 1]:
                                shutil.rmtree(os.path.join(args.output_dir, old))
                        save_path = os.path.join(args.output_dir, f"checkpoint-{global_step}")
                        accelerator.save_state(save_path)
                        print(f"Saved state to {save_path}")
            if global_step >= args.max_train_steps:
                break
    accelerator.wait_for_everyone()
    accelerator.end_training()


if __name__ == "__main__":
    main()
