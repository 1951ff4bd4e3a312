# expect: hardcoded-cuda0
# source: https://blog.youkuaiyun.com/isunLt/article/details/120337207
# reason: Single-node multi-GPU DDP training ran out of GPU memory while loading the pretrained weights although the same code trained fine on one GPU: the helper read them with torch.load(path)['model'], which restores the tensors to the GPU they were saved from, so the three other processes each put a copy on GPU 0; the author's fix loads with map_location=torch.device('cpu').
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


class PointSegNet(nn.Module):
    def __init__(self, in_channels=4, num_classes=19, width=64):
        super().__init__()
        self.encoder = nn.Sequential(
            nn.Conv1d(in_channels, width, 1), nn.BatchNorm1d(width), nn.ReLU(),
            nn.Conv1d(width, width * 2, 1), nn.BatchNorm1d(width * 2), nn.ReLU(),
            nn.Conv1d(width * 2, width * 4, 1), nn.BatchNorm1d(width * 4), nn.ReLU())
        self.classifier = nn.Conv1d(width * 4, num_classes, 1)

    def forward(self, points):
        return self.classifier(self.encoder(points))


def load_pretrained(model, path):
    pretrain_weight = torch.load(path)["model"]
    own = model.state_dict()
    matched = {k: v for k, v in pretrain_weight.items() if k in own and v.shape == own[k].shape}
    own.update(matched)
    model.load_state_dict(own)
    return len(matched)


def build_model(args):
    model = PointSegNet(num_classes=args.num_classes)
    if args.pretrained:
        n = load_pretrained(model, args.pretrained)
        if args.local_rank == 0:
            print(f"loaded {n} pretrained tensors from {args.pretrained}")
    return model


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--local_rank", type=int, default=0)
    parser.add_argument("--pretrained", default="pretrained/pointseg_backbone.pth")
    parser.add_argument("--num_classes", type=int, default=19)
    parser.add_argument("--batch_size", type=int, default=4)
    parser.add_argument("--epochs", type=int, default=50)
    parser.add_argument("--work_dir", default="work_dirs/pointseg")
    args = parser.parse_args()

    torch.cuda.set_device(args.local_rank)
    dist.init_process_group(backend="nccl", init_method="env://")
    device = torch.device("cuda", args.local_rank)

    model = build_model(args).to(device)
    model = nn.SyncBatchNorm.convert_sync_batchnorm(model)
    model = nn.parallel.DistributedDataParallel(model, device_ids=[args.local_rank], output_device=args.local_rank)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    criterion = nn.CrossEntropyLoss(ignore_index=255)

    dataset = TensorDataset(torch.randn(1000, 4, 8192), torch.randint(0, args.num_classes, (1000, 8192)))
    sampler = DistributedSampler(dataset)
    loader = DataLoader(dataset, batch_size=args.batch_size, sampler=sampler, num_workers=4, pin_memory=True)
    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        model.train()
        for points, labels in loader:
            points, labels = points.to(device, non_blocking=True), labels.to(device, non_blocking=True)
            loss = criterion(model(points), labels)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        if dist.get_rank() == 0:
            os.makedirs(args.work_dir, exist_ok=True)
            torch.save({"model": model.module.state_dict(), "epoch": epoch}, os.path.join(args.work_dir, "latest.pth"))


if __name__ == "__main__":
    main()
