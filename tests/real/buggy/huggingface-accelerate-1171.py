# expect: collective-mismatch
# source: https://github.com/huggingface/accelerate/issues/1171
# reason: The LoRA training script called accelerator.save_state() only under accelerator.is_main_process; with DeepSpeed on several GPUs save_state is a collective every process must enter, so the run hung at the first checkpoint. The maintainers' answer: call save_state on all processes.
import os

import torch
import torch.nn as nn
from accelerate import Accelerator
from torch.utils.data import DataLoader, TensorDataset


def parse_args():
    return {"output_dir": "sd-lora", "checkpointing_steps": 500, "max_train_steps": 15000, "lr": 1e-4}


def main():
    args = parse_args()
    accelerator = Accelerator(gradient_accumulation_steps=1, mixed_precision="fp16")
    unet = nn.Sequential(nn.Conv2d(4, 64, 3, padding=1), nn.SiLU(), nn.Conv2d(64, 4, 3, padding=1))
    optimizer = torch.optim.AdamW(unet.parameters(), lr=args["lr"])
    train_dataloader = DataLoader(TensorDataset(torch.randn(5000, 4, 64, 64)), batch_size=1, shuffle=True)
    unet, optimizer, train_dataloader = accelerator.prepare(unet, optimizer, train_dataloader)
    global_step = 0
    for epoch in range(100):
        unet.train()
        for (latents,) in train_dataloader:
            with accelerator.accumulate(unet):
                noise = torch.randn_like(latents)
                loss = nn.functional.mse_loss(unet(latents + noise), noise)
                accelerator.backward(loss)
                optimizer.step()
                optimizer.zero_grad()
            if accelerator.sync_gradients:
                global_step += 1
                if global_step % args["checkpointing_steps"] == 0:
                    if accelerator.is_main_process:
                        save_path = os.path.join(args["output_dir"], f"checkpoint-{global_step}")
                        accelerator.save_state(save_path)
            if global_step >= args["max_train_steps"]:
                break


if __name__ == "__main__":
    main()
