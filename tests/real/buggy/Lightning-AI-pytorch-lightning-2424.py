# expect:
# source: https://github.com/Lightning-AI/pytorch-lightning/issues/2424
# reason: Under DDP validation_epoch_end only saw the current process's outputs, which is by design (each rank validates its own shard); the reporter gathered the outputs from every rank (an all_gather that all ranks enter) and computed the metric once. The script below is that working version.
import pytorch_lightning as pl
import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset


def all_gather_tensor(t):
    """Every rank calls this; returns the concatenation of all ranks' tensors."""
    if not (dist.is_available() and dist.is_initialized()):
        return t
    chunks = [torch.zeros_like(t) for _ in range(dist.get_world_size())]
    dist.all_gather(chunks, t)
    return torch.cat(chunks)


def caption_score(preds, targets):
    return (preds.argmax(-1) == targets).float().mean()


class Captioner(pl.LightningModule):
    def __init__(self, vocab=1000, dim=256):
        super().__init__()
        self.encoder = torch.nn.Sequential(torch.nn.Linear(2048, dim), torch.nn.ReLU())
        self.decoder = torch.nn.Linear(dim, vocab)

    def forward(self, feats):
        return self.decoder(self.encoder(feats))

    def training_step(self, batch, batch_idx):
        feats, tokens = batch
        return F.cross_entropy(self(feats), tokens)

    def validation_step(self, batch, batch_idx):
        feats, tokens = batch
        return {"preds": self(feats), "targets": tokens}

    def validation_epoch_end(self, outputs):
        preds = all_gather_tensor(torch.cat([o["preds"] for o in outputs]))
        targets = all_gather_tensor(torch.cat([o["targets"] for o in outputs]))
        if self.trainer.is_global_zero:
            print(f"score on {len(targets)} validation items: {caption_score(preds, targets):.4f}")

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=1e-4)


if __name__ == "__main__":
    feats, tokens = torch.randn(4000, 2048), torch.randint(0, 1000, (4000,))
    train_dl = DataLoader(TensorDataset(feats, tokens), batch_size=64, shuffle=True)
    val_dl = DataLoader(TensorDataset(feats[:800], tokens[:800]), batch_size=64)
    trainer = pl.Trainer(gpus=4, accelerator="ddp", max_epochs=10)
    trainer.fit(Captioner(), train_dl, val_dl)
