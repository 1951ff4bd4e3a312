# expect: checkpoint-without-module
# source: https://github.com/mlcommons/algorithmic-efficiency/issues/412
# reason: Resuming a torchrun (DDP) run with --resume_last_run did not restore the weights: the restore helper only unwrapped nn.DataParallel, so the bare-key state dict was loaded into the DistributedDataParallel wrapper, whose keys carry 'module.', matched nothing, and training restarted from fresh weights; the fix proposed in the thread and taken up by the maintainers unwraps any model with a `.module`.
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler

USE_PYTORCH_DDP = "LOCAL_RANK" in os.environ
RANK = int(os.environ.get("RANK", 0))
LOCAL_RANK = int(os.environ.get("LOCAL_RANK", 0))
DEVICE = torch.device(f"cuda:{LOCAL_RANK}" if torch.cuda.is_available() else "cpu")


def unwrap(model_params):
    if isinstance(model_params, torch.nn.DataParallel):
        return model_params.module
    return model_params


def save_checkpoint(model_params, optimizer, global_step, checkpoint_dir):
    model_params = getattr(model_params, "module", model_params)
    state = {"model_state_dict": model_params.state_dict(), "optimizer_state_dict": optimizer.state_dict(),
             "global_step": global_step}
    torch.save(state, os.path.join(checkpoint_dir, f"checkpoint_{global_step}"))


def maybe_restore_checkpoint(model_params, optimizer, checkpoint_dir):
    paths = sorted(p for p in os.listdir(checkpoint_dir) if p.startswith("checkpoint_"))
    if not paths:
        return 0
    checkpoint = torch.load(os.path.join(checkpoint_dir, paths[-1]), map_location=DEVICE)
    model_params = unwrap(model_params)
    missing, _ = model_params.load_state_dict(checkpoint["model_state_dict"], strict=False)
    if missing:
        print(f"checkpoint did not restore {len(missing)} tensors")
    optimizer.load_state_dict(checkpoint["optimizer_state_dict"])
    return checkpoint["global_step"]


def main(args):
    if USE_PYTORCH_DDP:
        torch.cuda.set_device(LOCAL_RANK)
        dist.init_process_group("nccl")
    torch.manual_seed(args.seed)
    model = nn.Sequential(nn.Linear(784, 1024), nn.ReLU(), nn.Linear(1024, 10)).to(DEVICE)
    if USE_PYTORCH_DDP:
        model = DDP(model, device_ids=[LOCAL_RANK], output_device=LOCAL_RANK)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)
    os.makedirs(args.experiment_dir, exist_ok=True)
    global_step = maybe_restore_checkpoint(model, optimizer, args.experiment_dir) if args.resume_last_run else 0
    data = TensorDataset(torch.randn(60000, 784), torch.randint(0, 10, (60000,)))
    sampler = DistributedSampler(data) if USE_PYTORCH_DDP else None
    loader = DataLoader(data, batch_size=args.batch_size, sampler=sampler, shuffle=sampler is None, drop_last=True)
    epoch = 0
    while global_step < args.max_steps:
        if sampler is not None:
            sampler.set_epoch(epoch)
        for x, y in loader:
            loss = nn.functional.cross_entropy(model(x.to(DEVICE)), y.to(DEVICE))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            global_step += 1
            if global_step % args.checkpoint_every == 0 and RANK == 0:
                save_checkpoint(model, optimizer, global_step, args.experiment_dir)
            if global_step >= args.max_steps:
                break
        epoch += 1
    if USE_PYTORCH_DDP:
        dist.destroy_process_group()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--experiment_dir", default="experiments/mnist")
    parser.add_argument("--resume_last_run", action="store_true")
    parser.add_argument("--max_steps", type=int, default=10000)
    parser.add_argument("--checkpoint_every", type=int, default=1000)
    parser.add_argument("--batch_size", type=int, default=256)
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--seed", type=int, default=0)
    main(parser.parse_args())
