# expect: unused-parameters-error
# source: https://github.com/megvii-research/AnchorDETR/issues/6
# reason: Distributed training failed with "Your module has parameters that were not used in producing a loss": the transformer built layers its forward never called; the maintainer said to delete those lines.
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


class Transformer(nn.Module):
    def __init__(self, d_model=256, num_query_position=300, num_pattern=3):
        super().__init__()
        self.encoder = nn.TransformerEncoder(nn.TransformerEncoderLayer(d_model, 8, batch_first=True), 6)
        self.decoder = nn.TransformerDecoder(nn.TransformerDecoderLayer(d_model, 8, batch_first=True), 6)
        self.pattern = nn.Embedding(num_pattern, d_model)
        self.position = nn.Embedding(num_query_position, 2)
        self.adapt_pos2d = nn.Sequential(nn.Linear(d_model, d_model), nn.ReLU(), nn.Linear(d_model, d_model))
        self.adapt_pos1d = nn.Sequential(nn.Linear(d_model, d_model), nn.ReLU(), nn.Linear(d_model, d_model))
        self.query_proj = nn.Linear(2, d_model)

    def forward(self, src):
        memory = self.encoder(self.adapt_pos2d(src))
        queries = self.query_proj(self.position.weight).unsqueeze(0).expand(src.shape[0], -1, -1)
        return self.decoder(queries + self.pattern.weight.mean(0), memory)


class AnchorDETR(nn.Module):
    def __init__(self, num_classes=91):
        super().__init__()
        self.backbone = nn.Sequential(nn.Conv2d(3, 256, 16, stride=16), nn.Flatten(2))
        self.transformer = Transformer()
        self.class_embed = nn.Linear(256, num_classes)
        self.bbox_embed = nn.Linear(256, 4)

    def forward(self, images):
        hs = self.transformer(self.backbone(images).transpose(1, 2))
        return self.class_embed(hs), self.bbox_embed(hs).sigmoid()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=50)
    parser.add_argument("--batch_size", type=int, default=1)
    args = parser.parse_args()
    args.rank, args.gpu = int(os.environ["RANK"]), int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(args.gpu)
    dist.init_process_group(backend="nccl", init_method="env://")
    device = torch.device("cuda")
    model = AnchorDETR().to(device)
    model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[args.gpu])
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4, weight_decay=1e-4)
    dataset = TensorDataset(torch.randn(512, 3, 256, 256), torch.randint(0, 91, (512, 300)))
    sampler = DistributedSampler(dataset)
    loader = DataLoader(dataset, batch_sampler=torch.utils.data.BatchSampler(sampler, args.batch_size, drop_last=True))
    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        for images, labels in loader:
            logits, boxes = model(images.to(device))
            loss = nn.functional.cross_entropy(logits.flatten(0, 1), labels.to(device).flatten()) + boxes.abs().mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()


if __name__ == "__main__":
    main()
