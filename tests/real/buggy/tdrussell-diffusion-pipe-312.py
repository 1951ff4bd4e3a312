# expect: logging-from-all-ranks
# source: https://github.com/tdrussell/diffusion-pipe/pull/312
# reason: The DeepSpeed trainer (one process per GPU under the deepspeed launcher) called wandb.login/wandb.init whenever the TOML config enabled W&B, on every rank, so a multi-GPU run created one W&B run per GPU (the extra runs carried only system stats, as the wandb.log calls were already under is_main_process); the merged fix starts W&B on the main process only.
import argparse
import os
from datetime import datetime, timezone

import deepspeed
import toml
import torch
import wandb
from deepspeed import comm as dist
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

wandb_enable = False

parser = argparse.ArgumentParser()
parser.add_argument('--config', help='Path to TOML configuration file.')
parser.add_argument('--local_rank', type=int, default=-1,
                    help='local rank passed from distributed launcher')
parser = deepspeed.add_config_arguments(parser)
args = parser.parse_args()


def is_main_process():
    return dist.get_rank() == 0


class TinyDenoiser(nn.Module):
    def __init__(self, dim=64):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))

    def forward(self, x):
        return self.net(x)


def make_dataset(n=4096, dim=64):
    latents = torch.randn(n, dim)
    noise = torch.randn(n, dim)
    return TensorDataset(latents + noise, noise)


if __name__ == '__main__':
    with open(args.config) as f:
        config = toml.load(f)

    deepspeed.init_distributed()
    torch.cuda.set_device(dist.get_rank() % torch.cuda.device_count())

    run_dir = os.path.join(config['output_dir'], datetime.now(timezone.utc).strftime('%Y%m%d_%H-%M-%S'))
    if is_main_process():
        os.makedirs(run_dir, exist_ok=True)
    dist.barrier()

    # WandB logging
    wandb_enable = config.get('monitoring', {}).get('enable_wandb', False)
    if wandb_enable:
        wandb_api_key = config['monitoring']['wandb_api_key']
        wandb_tracker = config['monitoring']['wandb_tracker_name']
        wandb_run_name = config['monitoring']['wandb_run_name']
        logging_dir = run_dir
        wandb.login(key=wandb_api_key)
        wandb.init(
            project=wandb_tracker,
            name=wandb_run_name,
            config=config,
            dir=logging_dir,
        )

    model = TinyDenoiser()
    ds_config = {
        'train_micro_batch_size_per_gpu': config.get('micro_batch_size_per_gpu', 8),
        'gradient_accumulation_steps': config.get('gradient_accumulation_steps', 1),
        'gradient_clipping': 1.0,
        'optimizer': {'type': 'AdamW', 'params': {'lr': config.get('lr', 2e-5)}},
        'steps_per_print': 100,
    }
    model_engine, optimizer, train_dataloader, _ = deepspeed.initialize(
        args=args,
        model=model,
        model_parameters=[p for p in model.parameters() if p.requires_grad],
        training_data=make_dataset(),
        config=ds_config,
    )

    step = 1
    for epoch in range(1, config.get('epochs', 1) + 1):
        epoch_loss = 0.0
        num_steps = 0
        for noisy, target in train_dataloader:
            noisy = noisy.to(model_engine.device)
            target = target.to(model_engine.device)
            loss = nn.functional.mse_loss(model_engine(noisy), target)
            model_engine.backward(loss)
            model_engine.step()
            loss = loss.item()
            epoch_loss += loss
            num_steps += 1
            if is_main_process() and step % config.get('logging_steps', 10) == 0:
                if wandb_enable:
                    wandb.log({'train/loss': loss, 'step': step})
            step += 1

        if is_main_process():
            if wandb_enable:
                wandb.log({'train/epoch_loss': epoch_loss / num_steps, 'epoch': epoch})

    if is_main_process():
        print('TRAINING COMPLETE!')
