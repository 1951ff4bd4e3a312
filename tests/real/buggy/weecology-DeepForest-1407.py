# expect: collective-mismatch
# source: https://github.com/weecology/DeepForest/issues/1407
# reason: At the end of validation each rank computed its box metrics only if its own shard had accumulated ground truth; a rank whose shard held only empty images skipped the metrics' compute(), whose all_gather the other ranks still entered, so they hung until the NCCL watchdog fired; the maintainer's fix calls compute() on every rank.
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


class IoUMetric:
    def __init__(self):
        self.groundtruth_labels = []
        self.scores = []

    def update(self, preds, targets):
        for p, t in zip(preds, targets):
            if t.numel():
                self.groundtruth_labels.append(t)
                self.scores.append(p)

    def compute(self):
        local = torch.stack(self.scores).mean() if self.scores else torch.zeros((), device="cuda")
        gathered = [torch.zeros_like(local) for _ in range(dist.get_world_size())]
        dist.all_gather(gathered, local)
        return {"iou": torch.stack(gathered).mean().item()}


def compute_epoch_metrics(iou_metric):
    metrics = {}
    if len(iou_metric.groundtruth_labels) > 0:
        metrics.update(iou_metric.compute())
    return metrics


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    model = DDP(nn.Sequential(nn.Flatten(), nn.Linear(3 * 64 * 64, 4)).cuda(), device_ids=[local_rank])
    val = TensorDataset(torch.randn(40, 3, 64, 64), torch.randint(0, 2, (40,)))
    val_loader = DataLoader(val, batch_size=4, sampler=DistributedSampler(val, shuffle=False))
    iou_metric = IoUMetric()
    model.eval()
    with torch.no_grad():
        for images, has_boxes in val_loader:
            preds = model(images.cuda())
            targets = [torch.ones(1) if flag else torch.empty(0) for flag in has_boxes]
            iou_metric.update(preds, targets)
    metrics = compute_epoch_metrics(iou_metric)
    if dist.get_rank() == 0:
        print(metrics)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
