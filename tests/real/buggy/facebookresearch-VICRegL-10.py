# expect: unused-parameters-error
# source: https://github.com/facebookresearch/VICRegL/pull/10
# reason: Once the online classification loss was removed from pretraining, the model still computed logits with its linear classifier but the training loss no longer used them, so the classifier's parameters got no gradient and DDP needed find_unused_parameters; the PR author confirmed the logits no longer participate in the loss and added the flag.
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
import torchvision
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


def off_diagonal(x):
    n = x.shape[0]
    return x.flatten()[:-1].view(n - 1, n + 1)[:, 1:].flatten()


class VICReg(nn.Module):
    def __init__(self, args):
        super().__init__()
        self.args = args
        self.backbone = torchvision.models.resnet18()
        self.backbone.fc = nn.Identity()
        self.projector = nn.Sequential(nn.Linear(512, 2048), nn.BatchNorm1d(2048), nn.ReLU(), nn.Linear(2048, 2048))
        self.classifier = nn.Linear(512, args.num_classes)

    def forward(self, x, y, labels):
        rep_x = self.backbone(x)
        z_x, z_y = self.projector(rep_x), self.projector(self.backbone(y))
        repr_loss = F.mse_loss(z_x, z_y)
        z_x, z_y = z_x - z_x.mean(0), z_y - z_y.mean(0)
        std_loss = F.relu(1 - torch.sqrt(z_x.var(0) + 1e-4)).mean() + F.relu(1 - torch.sqrt(z_y.var(0) + 1e-4)).mean()
        cov_x = (z_x.T @ z_x) / (self.args.batch_size - 1)
        cov_loss = off_diagonal(cov_x).pow(2).sum() / z_x.shape[1]
        loss = self.args.inv_coeff * repr_loss + self.args.var_coeff * std_loss + self.args.cov_coeff * cov_loss
        logits = self.classifier(rep_x.detach())
        return loss, logits


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--batch-size", type=int, default=256)
    parser.add_argument("--epochs", type=int, default=300)
    parser.add_argument("--num-classes", type=int, default=1000)
    parser.add_argument("--inv-coeff", type=float, default=25.0)
    parser.add_argument("--var-coeff", type=float, default=25.0)
    parser.add_argument("--cov-coeff", type=float, default=1.0)
    args = parser.parse_args()
    dist.init_process_group(backend="nccl", init_method="env://")
    args.rank, args.world_size = dist.get_rank(), dist.get_world_size()
    gpu = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(gpu)
    model = VICReg(args).cuda(gpu)
    model = nn.SyncBatchNorm.convert_sync_batchnorm(model)
    model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[gpu])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.3, momentum=0.9, weight_decay=1e-6)
    dataset = TensorDataset(torch.randn(5000, 3, 96, 96), torch.randn(5000, 3, 96, 96), torch.randint(0, 1000, (5000,)))
    sampler = DistributedSampler(dataset, shuffle=True)
    loader = DataLoader(dataset, batch_size=args.batch_size // args.world_size, sampler=sampler, drop_last=True)
    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        for step, (x, y, labels) in enumerate(loader):
            x, y, labels = x.cuda(gpu, non_blocking=True), y.cuda(gpu, non_blocking=True), labels.cuda(gpu)
            loss, logits = model(x, y, labels)
            acc = (logits.argmax(1) == labels).float().mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            if args.rank == 0 and step % 100 == 0:
                print(f"epoch {epoch} step {step} loss {loss.item():.4f} online acc {acc.item():.3f}")
    if args.rank == 0:
        torch.save(model.module.backbone.state_dict(), "resnet18.pth")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
