# expect: unused-parameters-error
# source: https://github.com/huggingface/accelerate/issues/1191
# reason: Layer dropout (each training step replaces randomly chosen layers by their residual connection) broke multi-GPU training under Accelerate: the dropped layers' parameters get no gradient on that step and DDP errors out; the reporter solved it with find_unused_parameters=True (passed to Accelerate through DistributedDataParallelKwargs).
import random

import torch
import torch.nn as nn
from accelerate import Accelerator
from torch.utils.data import DataLoader, TensorDataset


class LayerDropEncoder(nn.Module):
    def __init__(self, dim=256, num_layers=12, layer_drop=0.2):
        super().__init__()
        self.layer_drop = layer_drop
        self.layers = nn.ModuleList(
            nn.TransformerEncoderLayer(dim, nhead=4, dim_feedforward=dim * 4, batch_first=True)
            for _ in range(num_layers))
        self.classifier = nn.Linear(dim, 2)

    def forward(self, x):
        for layer in self.layers:
            if self.training and random.random() < self.layer_drop:
                continue
            x = layer(x)
        return self.classifier(x.mean(dim=1))


def main():
    accelerator = Accelerator(mixed_precision="fp16")
    model = LayerDropEncoder()
    data = TensorDataset(torch.randn(4096, 64, 256), torch.randint(0, 2, (4096,)))
    loader = DataLoader(data, batch_size=32, shuffle=True)
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)
    model, optimizer, loader = accelerator.prepare(model, optimizer, loader)
    for epoch in range(10):
        model.train()
        for x, y in loader:
            loss = nn.functional.cross_entropy(model(x), y)
            accelerator.backward(loss)
            optimizer.step()
            optimizer.zero_grad()
        accelerator.print(f"epoch {epoch} done")


if __name__ == "__main__":
    main()
