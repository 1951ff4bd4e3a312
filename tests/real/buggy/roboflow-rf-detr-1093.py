# expect: unused-parameters-error
# source: https://github.com/roboflow/rf-detr/issues/1093
# reason: Detection-only models crashed under DDP with the unused-parameters error unless unused-parameter detection was on; the fix (PR 1094) enables it for every model.
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


class Detr(nn.Module):
    def __init__(self, num_queries=100, hidden=256):
        super().__init__()
        self.backbone = nn.Sequential(nn.Conv2d(3, hidden, 16, 16), nn.Flatten(2))
        self.query_embed = nn.Embedding(num_queries, hidden)
        self.decoder = nn.TransformerDecoder(nn.TransformerDecoderLayer(hidden, 8, batch_first=True), 2)
        self.class_embed = nn.Linear(hidden, 91)
        self.bbox_embed = nn.Linear(hidden, 4)
        self.enc_out_class_embed = nn.Linear(hidden, 91)  # two-stage head kept in the checkpoint layout

    def forward(self, x):
        memory = self.backbone(x).transpose(1, 2)
        q = self.query_embed.weight.unsqueeze(0).expand(x.shape[0], -1, -1)
        h = self.decoder(q, memory)
        return self.class_embed(h), self.bbox_embed(h).sigmoid()


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    device = torch.device("cuda", local_rank)
    model = DDP(Detr().to(device), device_ids=[local_rank])
    data = TensorDataset(torch.randn(1000, 3, 576, 576), torch.randint(0, 91, (1000, 100)), torch.rand(1000, 100, 4))
    sampler = DistributedSampler(data)
    loader = DataLoader(data, batch_size=4, sampler=sampler, num_workers=8, pin_memory=True)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    for epoch in range(50):
        sampler.set_epoch(epoch)
        for img, labels, boxes in loader:
            logits, pred_boxes = model(img.to(device))
            loss = nn.functional.cross_entropy(logits.flatten(0, 1), labels.to(device).flatten())
            loss = loss + nn.functional.l1_loss(pred_boxes, boxes.to(device))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
