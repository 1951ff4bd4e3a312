# expect: checkpoint-without-module
# source: https://github.com/jingyaogong/minimind/pull/594
# reason: LoRA weights saved during DDP training could not be loaded for inference: save_lora walked the DistributedDataParallel wrapper's named_modules(), so every saved key started with "module." and load_lora on the plain model failed; the merged fix strips the prefix.
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


class LoRA(nn.Module):
    def __init__(self, in_features, out_features, rank):
        super().__init__()
        self.A = nn.Linear(in_features, rank, bias=False)
        self.B = nn.Linear(rank, out_features, bias=False)
        self.A.weight.data.normal_(mean=0.0, std=0.02)
        self.B.weight.data.zero_()

    def forward(self, x):
        return self.B(self.A(x))


def apply_lora(model, rank=8):
    for name, module in model.named_modules():
        if isinstance(module, nn.Linear) and module.weight.shape[0] == module.weight.shape[1]:
            lora = LoRA(module.weight.shape[0], module.weight.shape[1], rank).to(module.weight.device)
            setattr(module, "lora", lora)
            original_forward = module.forward

            def forward_with_lora(x, layer1=original_forward, layer2=lora):
                return layer1(x) + layer2(x)

            module.forward = forward_with_lora


def save_lora(model, path):
    state_dict = {}
    for name, module in model.named_modules():
        if hasattr(module, "lora"):
            lora_state = {f"{name}.lora.{k}": v for k, v in module.lora.state_dict().items()}
            state_dict.update(lora_state)
    torch.save(state_dict, path)


class TinyLM(nn.Module):
    def __init__(self, vocab=6400, dim=512, layers=8):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.blocks = nn.ModuleList(nn.Sequential(nn.LayerNorm(dim), nn.Linear(dim, dim), nn.SiLU()) for _ in range(layers))
        self.lm_head = nn.Linear(dim, vocab, bias=False)

    def forward(self, ids):
        h = self.embed(ids)
        for block in self.blocks:
            h = h + block(h)
        return self.lm_head(h)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--save_dir", default="out")
    parser.add_argument("--lora_name", default="lora_identity")
    parser.add_argument("--save_interval", type=int, default=100)
    parser.add_argument("--epochs", type=int, default=10)
    args = parser.parse_args()
    ddp = int(os.environ.get("RANK", -1)) != -1
    device = "cuda:0"
    if ddp:
        dist.init_process_group(backend="nccl")
        ddp_local_rank = int(os.environ["LOCAL_RANK"])
        device = f"cuda:{ddp_local_rank}"
        torch.cuda.set_device(device)
    model = TinyLM().to(device)
    model.load_state_dict(torch.load("out/full_sft_512.pth", map_location=device))
    apply_lora(model)
    for name, param in model.named_parameters():
        param.requires_grad = "lora" in name
    lora_params = [p for n, p in model.named_parameters() if "lora" in n]
    if ddp:
        model = DistributedDataParallel(model, device_ids=[ddp_local_rank])
    data = TensorDataset(torch.randint(0, 6400, (4000, 128)))
    sampler = DistributedSampler(data) if ddp else None
    loader = DataLoader(data, batch_size=16, sampler=sampler, shuffle=sampler is None)
    optimizer = torch.optim.AdamW(lora_params, lr=1e-4)
    os.makedirs(os.path.join(args.save_dir, "lora"), exist_ok=True)
    for epoch in range(args.epochs):
        if sampler is not None:
            sampler.set_epoch(epoch)
        for step, (ids,) in enumerate(loader):
            ids = ids.to(device)
            logits = model(ids[:, :-1])
            loss = nn.functional.cross_entropy(logits.reshape(-1, logits.size(-1)), ids[:, 1:].reshape(-1))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            if (step + 1) % args.save_interval == 0 and (not ddp or dist.get_rank() == 0):
                model.eval()
                save_lora(model, f"{args.save_dir}/lora/{args.lora_name}_512.pth")
                model.train()


if __name__ == "__main__":
    main()
