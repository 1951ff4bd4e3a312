# expect: checkpoint-without-module
# source: https://github.com/LiheYoung/UniMatch/issues/31
# reason: The semi-supervised segmentation trainer saved checkpoint['model'] from the DistributedDataParallel wrapper, so every key carried the 'module.' prefix, and loading it into the bare model for evaluation failed with unexpected keys; the answer in the thread was to load it through the DDP-wrapped model (keys must match the wrapper they were saved from).
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


class DeepLabHead(nn.Module):
    def __init__(self, nclass=21):
        super().__init__()
        self.backbone = nn.Sequential(nn.Conv2d(3, 64, 3, 2, 1), nn.BatchNorm2d(64), nn.ReLU(),
                                      nn.Conv2d(64, 128, 3, 2, 1), nn.BatchNorm2d(128), nn.ReLU())
        self.classifier = nn.Conv2d(128, nclass, 1)

    def forward(self, x):
        h, w = x.shape[-2:]
        return F.interpolate(self.classifier(self.backbone(x)), size=(h, w), mode="bilinear", align_corners=False)


def setup_distributed():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group(backend="nccl")
    return dist.get_rank(), local_rank


def train(args, rank, local_rank):
    torch.manual_seed(0)
    model = nn.SyncBatchNorm.convert_sync_batchnorm(DeepLabHead()).cuda()
    model = nn.parallel.DistributedDataParallel(model, device_ids=[local_rank], broadcast_buffers=False)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.001, momentum=0.9, weight_decay=1e-4)
    trainset = TensorDataset(torch.randn(1464, 3, 128, 128), torch.randint(0, 21, (1464, 128, 128)))
    sampler = DistributedSampler(trainset)
    loader = DataLoader(trainset, batch_size=args.batch_size, sampler=sampler, num_workers=2, drop_last=True)
    previous_best = 0.0
    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        model.train()
        for img, mask in loader:
            loss = F.cross_entropy(model(img.cuda()), mask.cuda(), ignore_index=255)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        if rank == 0:
            checkpoint = {"model": model.state_dict(), "optimizer": optimizer.state_dict(),
                          "epoch": epoch, "previous_best": previous_best}
            torch.save(checkpoint, os.path.join(args.save_path, "latest.pth"))


def evaluate_checkpoint(args):
    model = DeepLabHead().cuda()
    checkpoint = torch.load(os.path.join(args.save_path, "latest.pth"), map_location="cpu")
    model.load_state_dict(checkpoint["model"])
    model.eval()
    valset = TensorDataset(torch.randn(64, 3, 128, 128), torch.randint(0, 21, (64, 128, 128)))
    correct = total = 0
    with torch.no_grad():
        for img, mask in DataLoader(valset, batch_size=1):
            pred = model(img.cuda()).argmax(1).cpu()
            correct += (pred == mask).sum().item()
            total += mask.numel()
    print(f"pixel accuracy {correct / total:.4f}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--save-path", default="exp/pascal/unimatch")
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--epochs", type=int, default=80)
    parser.add_argument("--eval-only", action="store_true")
    args = parser.parse_args()
    if args.eval_only:
        evaluate_checkpoint(args)
    else:
        rank, local_rank = setup_distributed()
        train(args, rank, local_rank)
        dist.destroy_process_group()
