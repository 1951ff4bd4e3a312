# expect: collective-mismatch
# source: https://github.com/bytedance/UNO/issues/52
# reason: Multi-GPU training got stuck at the first checkpoint: accelerator.wait_for_everyone() sat inside the block guarded by `accelerator.is_main_process and global_step % checkpointing_steps == 0`, so only the main process entered the barrier; moving wait_for_everyone() before the main-process guard (so every rank reaches it) fixed it.
import argparse
import os

import torch
import torch.nn as nn
from accelerate import Accelerator
from torch.utils.data import DataLoader, TensorDataset


class TinyDiT(nn.Module):
    def __init__(self, dim=256, depth=4):
        super().__init__()
        self.blocks = nn.ModuleList(nn.TransformerEncoderLayer(dim, 8, batch_first=True) for _ in range(depth))
        self.out = nn.Linear(dim, dim)

    def forward(self, x):
        for block in self.blocks:
            x = block(x)
        return self.out(x)


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--project_dir", default="output")
    parser.add_argument("--checkpointing_steps", type=int, default=1000)
    parser.add_argument("--max_train_steps", type=int, default=20000)
    parser.add_argument("--train_batch_size", type=int, default=4)
    return parser.parse_args()


def main():
    args = parse_args()
    accelerator = Accelerator(gradient_accumulation_steps=2, mixed_precision="bf16")
    dit = TinyDiT()
    optimizer = torch.optim.AdamW(dit.parameters(), lr=1e-4)
    dataset = TensorDataset(torch.randn(4096, 64, 256), torch.randn(4096, 64, 256))
    train_dataloader = DataLoader(dataset, batch_size=args.train_batch_size, shuffle=True)
    dit, optimizer, train_dataloader = accelerator.prepare(dit, optimizer, train_dataloader)
    global_step = 0
    while global_step < args.max_train_steps:
        for x, target in train_dataloader:
            with accelerator.accumulate(dit):
                loss = nn.functional.mse_loss(dit(x), target)
                accelerator.backward(loss)
                optimizer.step()
                optimizer.zero_grad()
            if accelerator.sync_gradients:
                global_step += 1
            if accelerator.sync_gradients and accelerator.is_main_process and global_step % args.checkpointing_steps == 0:
                save_path = os.path.join(args.project_dir, f"checkpoint-{global_step}")
                os.makedirs(save_path, exist_ok=True)
                accelerator.wait_for_everyone()
                unwrapped = accelerator.unwrap_model(dit)
                state = {k: v for k, v in unwrapped.state_dict().items()}
                torch.save(state, os.path.join(save_path, "dit.bin"))
            if global_step >= args.max_train_steps:
                break
    accelerator.end_training()


if __name__ == "__main__":
    main()
