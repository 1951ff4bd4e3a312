# expect: hardcoded-cuda0
# source: https://github.com/scu-zjz/IMDLBenCo/pull/93
# reason: The benchmark's models loaded their pretrained backbone weights in the model constructor with torch.load(path) and no map_location; the checkpoint's tensors were restored onto the GPU they were saved from, so under distributed training every process allocated them on that device (redundant CUDA memory); the merged update loads the pretrained weights to CPU first.
import argparse
import datetime
import os

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset
from torch.utils.data.distributed import DistributedSampler


def init_distributed_mode(args):
    if "RANK" in os.environ and "WORLD_SIZE" in os.environ:
        args.rank = int(os.environ["RANK"])
        args.world_size = int(os.environ["WORLD_SIZE"])
        args.gpu = int(os.environ["LOCAL_RANK"])
    else:
        args.distributed = False
        return
    args.distributed = True
    torch.cuda.set_device(args.gpu)
    dist.init_process_group(backend="nccl", init_method="env://", world_size=args.world_size, rank=args.rank,
                            timeout=datetime.timedelta(minutes=60))
    dist.barrier()


class ViTBackbone(nn.Module):
    def __init__(self, dim=768, depth=12):
        super().__init__()
        self.patch_embed = nn.Conv2d(3, dim, 16, 16)
        self.blocks = nn.ModuleList([nn.TransformerEncoderLayer(dim, 12, 4 * dim, batch_first=True) for _ in range(depth)])

    def forward(self, x):
        x = self.patch_embed(x).flatten(2).transpose(1, 2)
        for blk in self.blocks:
            x = blk(x)
        return x


class IMLViT(nn.Module):
    def __init__(self, vit_pretrain_path=None, edge_lambda=20.0):
        super().__init__()
        self.encoder_net = ViTBackbone()
        if vit_pretrain_path is not None:
            weights = torch.load(vit_pretrain_path)
            self.encoder_net.load_state_dict(weights["model"], strict=False)
        self.decoder = nn.Sequential(nn.Linear(768, 256), nn.GELU(), nn.Linear(256, 256))
        self.edge_lambda = edge_lambda

    def forward(self, image, mask, edge_mask, **kwargs):
        feats = self.encoder_net(image)
        side = int(feats.size(1) ** 0.5)
        logits = self.decoder(feats).mean(-1).view(-1, 1, side, side)
        logits = F.interpolate(logits, size=mask.shape[-2:], mode="bilinear", align_corners=False)
        predict_loss = F.binary_cross_entropy_with_logits(logits, mask)
        edge_loss = F.binary_cross_entropy_with_logits(logits * edge_mask, mask * edge_mask) * self.edge_lambda
        return {"backward_loss": predict_loss + edge_loss, "pred_mask": torch.sigmoid(logits)}


class ManiDataset(Dataset):
    def __init__(self, num=2000, size=512):
        self.num, self.size = num, size

    def __len__(self):
        return self.num

    def __getitem__(self, idx):
        image = torch.rand(3, self.size, self.size)
        mask = (torch.rand(1, self.size, self.size) > 0.9).float()
        return {"image": image, "mask": mask, "edge_mask": mask}


def train_one_epoch(model, data_loader, optimizer, device, epoch, args):
    model.train(True)
    for data_iter_step, data_dict in enumerate(data_loader):
        for key in data_dict:
            data_dict[key] = data_dict[key].to(device, non_blocking=True)
        output = model(**data_dict)
        loss = output["backward_loss"]
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if args.rank == 0 and data_iter_step % 100 == 0:
            print(f"epoch {epoch} step {data_iter_step} loss {loss.item():.4f}")


def main(args):
    init_distributed_mode(args)
    device = torch.device("cuda")
    dataset_train = ManiDataset()
    sampler_train = DistributedSampler(dataset_train, num_replicas=args.world_size, rank=args.rank, shuffle=True)
    data_loader_train = DataLoader(dataset_train, sampler=sampler_train, batch_size=args.batch_size,
                                   num_workers=args.num_workers, pin_memory=True, drop_last=True)

    model = IMLViT(vit_pretrain_path=args.vit_pretrain_path)
    model.to(device)
    model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[args.gpu], find_unused_parameters=False)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, betas=(0.9, 0.95), weight_decay=0.05)

    for epoch in range(args.epochs):
        sampler_train.set_epoch(epoch)
        train_one_epoch(model, data_loader_train, optimizer, device, epoch, args)
        if args.rank == 0 and (epoch % 10 == 0 or epoch + 1 == args.epochs):
            torch.save({"model": model.module.state_dict(), "epoch": epoch}, os.path.join(args.output_dir, f"checkpoint-{epoch}.pth"))

    dist.destroy_process_group()


if __name__ == "__main__":
    parser = argparse.ArgumentParser("IML-ViT training")
    parser.add_argument("--vit_pretrain_path", default="pretrained/mae_pretrain_vit_base.pth")
    parser.add_argument("--batch_size", type=int, default=2)
    parser.add_argument("--epochs", type=int, default=200)
    parser.add_argument("--lr", type=float, default=1e-4)
    parser.add_argument("--num_workers", type=int, default=8)
    parser.add_argument("--output_dir", default="output_dir")
    main(parser.parse_args())
