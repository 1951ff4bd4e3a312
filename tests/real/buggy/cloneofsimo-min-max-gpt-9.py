# expect: missing-set-epoch
# source: https://github.com/cloneofsimo/min-max-gpt/pull/9
# reason: The DeepSpeed training script (click options, ZeRO engine) sampled WikiText through a DistributedSampler but its epoch loop never called set_epoch, so every epoch reused the first epoch's order; the maintainer merged the PR that calls train_sampler.set_epoch(epoch) at the top of each epoch.
import math

import click
import deepspeed
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset, RandomSampler
from torch.utils.data.distributed import DistributedSampler


class RandomTokens(Dataset):
    def __init__(self, n_rows=20000, seq_len=256, vocab=50257):
        self.data = torch.randint(0, vocab, (n_rows, seq_len))

    def __len__(self):
        return len(self.data)

    def __getitem__(self, idx):
        return {"input_ids": self.data[idx]}


class SmallGPT(nn.Module):
    def __init__(self, vocab=50257, width=128, layers=4):
        super().__init__()
        self.wte = nn.Embedding(vocab, width)
        self.blocks = nn.ModuleList(nn.TransformerEncoderLayer(width, 4, 4 * width, batch_first=True) for _ in range(layers))
        self.lm_head = nn.Linear(width, vocab, bias=False)

    def forward(self, input_ids):
        h = self.wte(input_ids)
        for block in self.blocks:
            h = block(h)
        logits = self.lm_head(h)
        loss = nn.functional.cross_entropy(logits[:, :-1].reshape(-1, logits.size(-1)), input_ids[:, 1:].reshape(-1))
        return {"loss": loss}


def run_epoch(engine, loader, device):
    engine.train()
    total = 0.0
    for batch in loader:
        loss = engine(batch["input_ids"].to(device))["loss"]
        engine.backward(loss)
        engine.step()
        total += loss.item()
    return total / len(loader)


@click.command()
@click.option("--local_rank", default=-1)
@click.option("--seed", default=42)
@click.option("--per_device_train_batch_size", default=32)
@click.option("--train_batch_size", default=256)
@click.option("--learning_rate", default=1e-3)
@click.option("--num_train_epochs", default=3)
def main(local_rank, seed, per_device_train_batch_size, train_batch_size, learning_rate, num_train_epochs):
    torch.manual_seed(seed)
    if local_rank == -1:
        device = torch.device("cuda")
    else:
        torch.cuda.set_device(local_rank)
        device = torch.device("cuda", local_rank)
        deepspeed.init_distributed()
    ds_config = {
        "train_micro_batch_size_per_gpu": per_device_train_batch_size,
        "train_batch_size": train_batch_size,
        "zero_optimization": {"stage": 2},
        "bf16": {"enabled": True},
        "gradient_clipping": 1.0,
    }
    dataset = RandomTokens()
    train_sampler = RandomSampler(dataset) if local_rank == -1 else DistributedSampler(dataset, seed=seed)
    train_loader = DataLoader(dataset, sampler=train_sampler, batch_size=per_device_train_batch_size)
    model = SmallGPT()
    optimizer = torch.optim.AdamW(model.parameters(), lr=learning_rate, betas=(0.9, 0.95))
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: min(1.0, (s + 1) / 100))
    engine, optimizer, _, scheduler = deepspeed.initialize(model=model, optimizer=optimizer, lr_scheduler=scheduler, config=ds_config)
    for epoch in range(num_train_epochs):
        avg = run_epoch(engine, train_loader, engine.device)
        if torch.distributed.get_rank() == 0:
            print(f"Epoch {epoch + 1}, Train Loss: {avg:.4f}, steps/epoch {math.ceil(len(train_loader))}")


if __name__ == "__main__":
    main()
