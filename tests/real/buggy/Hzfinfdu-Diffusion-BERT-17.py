# expect: checkpoint-without-module
# source: https://github.com/Hzfinfdu/Diffusion-BERT/issues/17
# reason: The DDP training script saves `model.state_dict()` of the DistributedDataParallel wrapper in its best-checkpoint dict, so every key carries the "module." prefix; the prediction script builds the bare model and load_state_dict fails with "Missing key(s) in state_dict". The maintainer: trained with DDP, the state dict keys differ.
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler
from transformers import RobertaConfig, RobertaForMaskedLM


def evaluate(model, loader, device):
    model.eval()
    total = torch.zeros(1, device=device)
    with torch.no_grad():
        for (ids,) in loader:
            total += model(input_ids=ids.to(device), labels=ids.to(device)).loss
    dist.all_reduce(total)
    model.train()
    return total.item()


def train(save_path, steps_per_eval=2000):
    local_rank = int(os.environ["LOCAL_RANK"])
    device = torch.device("cuda", local_rank)
    torch.cuda.set_device(local_rank)
    dist.init_process_group(backend="nccl")
    cfg = RobertaConfig(vocab_size=50265)
    model = RobertaForMaskedLM(cfg).to(device)
    model = DDP(model, device_ids=[local_rank], output_device=local_rank)
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-5)
    train_data = TensorDataset(torch.randint(0, cfg.vocab_size, (4096, 64)))
    dev_data = TensorDataset(torch.randint(0, cfg.vocab_size, (512, 64)))
    train_sampler = DistributedSampler(train_data)
    train_loader = DataLoader(train_data, batch_size=32, sampler=train_sampler)
    dev_loader = DataLoader(dev_data, batch_size=64, sampler=DistributedSampler(dev_data, shuffle=False))
    best = float("inf")
    step = -1
    for epoch in range(10):
        train_sampler.set_epoch(epoch)
        for (ids,) in train_loader:
            step += 1
            loss = model(input_ids=ids.to(device), labels=ids.to(device)).loss
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()
            if step % steps_per_eval == steps_per_eval - 1:
                dev_loss = evaluate(model, dev_loader, device)
                if dist.get_rank() == 0 and dev_loss <= best:
                    best = dev_loss
                    torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict()},
                               os.path.join(save_path, f"best({step}).th"))


def predict(ckpt_path):
    cfg = RobertaConfig(vocab_size=50265)
    model = RobertaForMaskedLM(cfg)
    ckpt = torch.load(ckpt_path, map_location="cpu")
    model.load_state_dict(ckpt["model"])
    return model


if __name__ == "__main__":
    train("./ckpts")
