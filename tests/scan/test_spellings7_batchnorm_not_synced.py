"""batchnorm-not-synced (session 9): torchvision models with BatchNorm reached through other spellings.

The classification factories through their module (``torchvision.models.resnet.resnet50``), the segmentation models on
those backbones (``segmentation.deeplabv3_resnet50``, ``fcn_*``, ``lraspp_*``: small per-GPU batches of large crops,
the textbook SyncBatchNorm case) and the video ResNets (BatchNorm3d) train with per-GPU statistics under DDP. Detection
models freeze their backbone's BatchNorm (FrozenBatchNorm2d) and stay quiet, as does a converted model.
"""

from __future__ import annotations

import pytest

from tests.scan.conftest import scan_ids

ID = "batchnorm-not-synced"

SCRIPT = '''
import os

import torch
import torch.distributed as dist
import torchvision
from torch.nn.parallel import DistributedDataParallel as DDP


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    model = {factory}(num_classes=21).cuda()
{convert}    model = DDP(model, device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    for step in range(100):
        images = torch.randn(2, 3, 512, 512).cuda()
        loss = model(images)["out"].mean() if isinstance(model(images), dict) else model(images).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


if __name__ == "__main__":
    main()
'''

CONVERT = "    model = torch.nn.SyncBatchNorm.convert_sync_batchnorm(model)\n"


@pytest.mark.parametrize("factory", ["torchvision.models.segmentation.deeplabv3_resnet50",
                                     "torchvision.models.segmentation.fcn_resnet101",
                                     "torchvision.models.resnet.resnet50",
                                     "torchvision.models.video.r3d_18"])
def test_per_gpu_batchnorm(tmp_path, factory):
    assert ID in scan_ids(tmp_path, SCRIPT.format(factory=factory, convert=""))


@pytest.mark.parametrize("factory,convert", [("torchvision.models.segmentation.deeplabv3_resnet50", CONVERT),
                                             ("torchvision.models.detection.fasterrcnn_resnet50_fpn", ""),
                                             ("torchvision.models.vgg.vgg16", "")],
                         ids=["converted", "detection_frozen_bn", "no_batchnorm"])
def test_quiet(tmp_path, factory, convert):
    assert ID not in scan_ids(tmp_path, SCRIPT.format(factory=factory, convert=convert))
