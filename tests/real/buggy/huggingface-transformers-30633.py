# expect: unused-parameters-error
# source: https://github.com/huggingface/transformers/issues/30633
# reason: Fine-tuning DPT depth estimation under DDP reported "Parameters which did not receive grad" for neck.fusion_stage.layers.0.residual_layer1: the first feature-fusion layer is always called without a residual, so the branch that uses residual_layer1 never runs for it and those parameters never get a gradient (the maintainers later removed the unreachable module).
import os

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


class PreActResidualLayer(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.convolution1 = nn.Conv2d(channels, channels, 3, padding=1)
        self.convolution2 = nn.Conv2d(channels, channels, 3, padding=1)

    def forward(self, x):
        return x + self.convolution2(F.relu(self.convolution1(F.relu(x))))


class FeatureFusionLayer(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.projection = nn.Conv2d(channels, channels, 1)
        self.residual_layer1 = PreActResidualLayer(channels)
        self.residual_layer2 = PreActResidualLayer(channels)

    def forward(self, hidden_state, residual=None):
        if residual is not None:
            if hidden_state.shape != residual.shape:
                residual = F.interpolate(residual, size=hidden_state.shape[2:], mode="bilinear", align_corners=False)
            hidden_state = hidden_state + self.residual_layer1(residual)
        hidden_state = self.residual_layer2(hidden_state)
        hidden_state = F.interpolate(hidden_state, scale_factor=2, mode="bilinear", align_corners=True)
        return self.projection(hidden_state)


class FeatureFusionStage(nn.Module):
    def __init__(self, channels, num_layers=4):
        super().__init__()
        self.layers = nn.ModuleList(FeatureFusionLayer(channels) for _ in range(num_layers))

    def forward(self, hidden_states):
        fused = None
        for hidden_state, layer in zip(hidden_states[::-1], self.layers):
            fused = layer(hidden_state) if fused is None else layer(fused, hidden_state)
        return fused


class DepthEstimator(nn.Module):
    def __init__(self, channels=64):
        super().__init__()
        self.stages = nn.ModuleList(nn.Conv2d(3 if i == 0 else channels, channels, 3, stride=2, padding=1)
                                    for i in range(4))
        self.fusion_stage = FeatureFusionStage(channels)
        self.head = nn.Conv2d(channels, 1, 3, padding=1)

    def forward(self, pixel_values):
        features, x = [], pixel_values
        for stage in self.stages:
            x = F.relu(stage(x))
            features.append(x)
        return self.head(self.fusion_stage(features))


def main():
    rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(rank)
    dist.init_process_group("nccl")
    model = DDP(DepthEstimator().cuda(rank), device_ids=[rank])
    data = TensorDataset(torch.randn(800, 3, 256, 256), torch.rand(800, 1, 128, 128))
    sampler = DistributedSampler(data)
    loader = DataLoader(data, batch_size=4, sampler=sampler)
    optimizer = torch.optim.AdamW(model.parameters(), lr=5e-5)
    for epoch in range(20):
        sampler.set_epoch(epoch)
        for pixels, depth in loader:
            pred = model(pixels.cuda(rank))
            loss = F.l1_loss(F.interpolate(pred, size=depth.shape[2:]), depth.cuda(rank))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
