# expect: collective-mismatch
# source: https://github.com/NVIDIA-TAO/tao-pytorch/pull/74
# reason: The OneFormer LightningModule reduced its per-dataloader segmentation statistics across ranks at the end of validation, but iterated only over the dataloaders that had produced outputs on that rank and raised before the reduction when a rank had received no samples; a rank with an empty share skipped collectives the other ranks entered, so the job could deadlock; the merged fix makes every rank enter each configured dataloader's collective with zero local statistics.
from collections import defaultdict

import lightning.pytorch as pl
import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset


class OneFormerLite(nn.Module):
    def __init__(self, num_classes=19):
        super().__init__()
        self.backbone = nn.Sequential(nn.Conv2d(3, 64, 3, 2, 1), nn.ReLU(), nn.Conv2d(64, 128, 3, 2, 1), nn.ReLU())
        self.head = nn.Conv2d(128, num_classes, 1)

    def forward(self, images):
        logits = self.head(self.backbone(images))
        return F.interpolate(logits, size=images.shape[-2:], mode="bilinear", align_corners=False)


class OneFormerPlModel(pl.LightningModule):
    def __init__(self, num_classes=19, dataset_names=("cityscapes", "ade20k")):
        super().__init__()
        self.model = OneFormerLite(num_classes)
        self.num_classes = num_classes
        self.dataset_names = dataset_names
        self.validation_outputs = defaultdict(list)

    def training_step(self, batch, batch_idx):
        images, labels = batch
        loss = F.cross_entropy(self.model(images), labels, ignore_index=255)
        self.log("train_loss", loss, sync_dist=True)
        return loss

    def validation_step(self, batch, batch_idx, dataloader_idx=0):
        images, labels = batch
        preds = self.model(images).argmax(1)
        valid = labels != 255
        intersect = torch.bincount(preds[valid & (preds == labels)], minlength=self.num_classes)
        area_pred = torch.bincount(preds[valid], minlength=self.num_classes)
        area_label = torch.bincount(labels[valid], minlength=self.num_classes)
        self.validation_outputs[dataloader_idx].append((intersect, area_pred + area_label - intersect, area_label))

    def on_validation_epoch_end(self):
        outputs_by_dl = dict(self.validation_outputs)
        if not outputs_by_dl:
            raise RuntimeError("No validation samples were evaluated on this rank.")
        for index, outputs in outputs_by_dl.items():
            intersect = torch.stack([o[0] for o in outputs]).sum(0).float()
            union = torch.stack([o[1] for o in outputs]).sum(0).float()
            if dist.is_available() and dist.is_initialized():
                dist.all_reduce(intersect)
                dist.all_reduce(union)
            miou = (intersect / union.clamp(min=1)).mean()
            self.log(f"val_miou_{self.dataset_names[index]}", miou, rank_zero_only=True)
        self.validation_outputs.clear()

    def configure_optimizers(self):
        return torch.optim.AdamW(self.parameters(), lr=1e-4, weight_decay=0.05)


def make_loader(num, shuffle):
    dataset = TensorDataset(torch.rand(num, 3, 256, 256), torch.randint(0, 19, (num, 256, 256)))
    return DataLoader(dataset, batch_size=2, shuffle=shuffle, num_workers=4)


if __name__ == "__main__":
    model = OneFormerPlModel()
    trainer = pl.Trainer(accelerator="gpu", devices=8, strategy="ddp", max_epochs=50)
    trainer.fit(model, train_dataloaders=make_loader(2975, True), val_dataloaders=[make_loader(9, False), make_loader(5, False)])
