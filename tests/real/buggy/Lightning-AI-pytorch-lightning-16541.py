# expect: collective-mismatch
# source: https://github.com/Lightning-AI/pytorch-lightning/issues/16541
# reason: The test run hung forever with no error: self.all_gather (a collective) was called only inside `if self.trainer.is_global_zero`, so rank 0 waited for ranks that never joined; calling it on every rank and filtering afterwards fixed it.
import pytorch_lightning as pl
import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset


class ScoreModel(pl.LightningModule):
    def __init__(self, dim_in=5, dim_out=1):
        super().__init__()
        self.save_hyperparameters()
        self.fc = torch.nn.Linear(dim_in, dim_out)

    def forward(self, x):
        return self.fc(x)

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=1e-3)

    def training_step(self, batch, batch_idx):
        x, y = batch
        return F.binary_cross_entropy_with_logits(self(x), y)

    def test_step(self, batch, batch_idx):
        x, _ = batch
        return torch.sigmoid(self(x))

    def test_epoch_end(self, outputs):
        if self.trainer.is_global_zero:
            gathered = self.all_gather(torch.cat(outputs))
            scores = gathered.flatten()
            print(f"gathered {scores.numel()} scores, mean {scores.mean():.3f}")


def loaders(n=1000, dim_in=5):
    x, y = torch.rand(n, dim_in), torch.randint(0, 2, (n, 1)).float()
    return DataLoader(TensorDataset(x, y), batch_size=32, shuffle=True), DataLoader(TensorDataset(x, y), batch_size=32)


if __name__ == "__main__":
    train_dl, test_dl = loaders()
    model = ScoreModel()
    trainer = pl.Trainer(accelerator="gpu", devices=2, strategy="ddp", max_epochs=3)
    trainer.fit(model, train_dl)
    trainer.test(model, test_dl)
