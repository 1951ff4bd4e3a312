# expect: logging-from-all-ranks
# source: https://github.com/bytedance/ibot/issues/15
# reason: In DDP training every process wrote the checkpoint to the same file, so writes could collide and the saved checkpoint could fail to load with torch.load; the maintainer fixed it by saving from the main process only.
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


def init_distributed_mode(args):
    args.rank = int(os.environ["RANK"])
    args.gpu = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(args.gpu)
    dist.init_process_group(backend="nccl", init_method="env://")


def restart_from_checkpoint(ckp_path, run_variables=None, **kwargs):
    if not os.path.isfile(ckp_path):
        return
    checkpoint = torch.load(ckp_path, map_location="cpu")
    for key, value in kwargs.items():
        if key in checkpoint and value is not None:
            value.load_state_dict(checkpoint[key])
    for var_name in run_variables or {}:
        if var_name in checkpoint:
            run_variables[var_name] = checkpoint[var_name]


def train_ibot(args):
    init_distributed_mode(args)
    student = nn.Sequential(nn.Linear(768, 2048), nn.GELU(), nn.Linear(2048, 8192)).cuda()
    teacher = nn.Sequential(nn.Linear(768, 2048), nn.GELU(), nn.Linear(2048, 8192)).cuda()
    student = nn.parallel.DistributedDataParallel(student, device_ids=[args.gpu])
    teacher.load_state_dict(student.module.state_dict())
    for p in teacher.parameters():
        p.requires_grad = False
    optimizer = torch.optim.AdamW(student.parameters(), lr=5e-4)
    dataset = TensorDataset(torch.randn(4096, 768))
    sampler = DistributedSampler(dataset, shuffle=True)
    loader = DataLoader(dataset, sampler=sampler, batch_size=args.batch_size_per_gpu, drop_last=True)
    to_restore = {"epoch": 0}
    restart_from_checkpoint(os.path.join(args.output_dir, "checkpoint.pth"), run_variables=to_restore,
                            student=student, teacher=teacher, optimizer=optimizer)
    for epoch in range(to_restore["epoch"], args.epochs):
        sampler.set_epoch(epoch)
        for (views,) in loader:
            views = views.cuda(non_blocking=True)
            with torch.no_grad():
                target = teacher(views).softmax(-1)
            loss = -(target * student(views).log_softmax(-1)).sum(-1).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        save_dict = {"student": student.state_dict(), "teacher": teacher.state_dict(),
                     "optimizer": optimizer.state_dict(), "epoch": epoch + 1, "args": args}
        torch.save(save_dict, os.path.join(args.output_dir, "checkpoint.pth"))


if __name__ == "__main__":
    parser = argparse.ArgumentParser("iBOT")
    parser.add_argument("--batch_size_per_gpu", type=int, default=64)
    parser.add_argument("--epochs", type=int, default=100)
    parser.add_argument("--output_dir", default=".")
    train_ibot(parser.parse_args())
