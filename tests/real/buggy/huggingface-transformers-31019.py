# expect: hf-cache-contention
# source: https://github.com/huggingface/transformers/issues/31019
# reason: "unable to open file" from from_pretrained on several processes with a cold cache: the fastest rank was still downloading while the others opened the half-written file; loading on local rank 0 first and then the rest behind a barrier avoided it.
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler
from transformers import AutoModel


class ProbeClassifier(nn.Module):
    def __init__(self, encoder, num_classes):
        super().__init__()
        self.encoder = encoder
        self.head = nn.Linear(encoder.config.hidden_size, num_classes)

    def forward(self, pixel_values):
        return self.head(self.encoder(pixel_values=pixel_values).pooler_output)


def get_vit(name="facebook/dinov2-large"):
    return AutoModel.from_pretrained(name)


def main(num_classes=100, epochs=10):
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    device = torch.device("cuda", local_rank)
    model = ProbeClassifier(get_vit(), num_classes).to(device)
    model = DDP(model, device_ids=[local_rank])
    data = TensorDataset(torch.randn(2048, 3, 224, 224), torch.randint(0, num_classes, (2048,)))
    sampler = DistributedSampler(data)
    loader = DataLoader(data, batch_size=32, sampler=sampler, num_workers=4)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-5)
    for epoch in range(epochs):
        sampler.set_epoch(epoch)
        for images, labels in loader:
            loss = nn.functional.cross_entropy(model(images.to(device)), labels.to(device))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
