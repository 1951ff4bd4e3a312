"""missing-distributed-sampler under a framework that shards only what it is given: Accelerate's ``prepare`` and
Fabric's ``setup_dataloaders`` shard the loaders passed to them, so a training loader built beside the call and
never handed over is read in full on every rank. Near misses: the loader is passed (by name, by attribute, in a
later statement), the call takes ``*args`` (cannot tell), or the loader only evaluates."""

from __future__ import annotations

import pytest

from tests.scan.conftest import scan_ids

ID = "missing-distributed-sampler"

SCRIPT = '''
import torch
import torch.nn as nn
from accelerate import Accelerator
from torch.utils.data import DataLoader, TensorDataset


def main():
    accelerator = Accelerator()
    model = nn.Sequential(nn.Linear(8, 8), nn.ReLU(), nn.Linear(8, 2))
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    loader = DataLoader(TensorDataset(torch.randn(64, 8)), batch_size=4, shuffle=True)
    {prepare}
    for epoch in range(3):
        for (x,) in loader:
            loss = model(x.to(accelerator.device)).sum()
            opt.zero_grad()
            accelerator.backward(loss)
            opt.step()


if __name__ == "__main__":
    main()
'''


def test_loader_never_prepared(tmp_path):
    assert ID in scan_ids(tmp_path, SCRIPT.format(prepare="model, opt = accelerator.prepare(model, opt)"))


@pytest.mark.parametrize("prepare", [
    "model, opt, loader = accelerator.prepare(model, opt, loader)",
    "model, opt = accelerator.prepare(model, opt)\n    loader = accelerator.prepare(loader)",
    "model, opt = accelerator.prepare(model, opt)\n    loader = accelerator.prepare_data_loader(loader)",
    "model, opt, loader = accelerator.prepare(*[model, opt, loader])",
])
def test_prepared_or_unknown_stays_quiet(tmp_path, prepare):
    assert ID not in scan_ids(tmp_path, SCRIPT.format(prepare=prepare))


def test_fabric_loader_not_set_up(tmp_path):
    code = SCRIPT.format(prepare="model, opt = fabric.setup(model, opt)\n    other = fabric.setup_dataloaders(loader2)").replace(
        "from accelerate import Accelerator", "from lightning.fabric import Fabric").replace(
        "    accelerator = Accelerator()", "    fabric = Fabric(accelerator='cuda', devices=2, strategy='ddp')\n"
        "    fabric.launch()\n    loader2 = DataLoader(TensorDataset(torch.randn(8, 8)), batch_size=4)").replace(
        "accelerator.backward(loss)", "fabric.backward(loss)").replace("x.to(accelerator.device)", "x")
    assert ID in scan_ids(tmp_path, code)


HF = '''
import torch
from torch.utils.data import DataLoader
from transformers import AutoModelForSequenceClassification, Trainer, TrainingArguments


class MyTrainer(Trainer):
    def get_train_dataloader(self):
{body}


def main():
    model = AutoModelForSequenceClassification.from_pretrained("bert-base-uncased")
    args = TrainingArguments(output_dir="out", per_device_train_batch_size=8)
    trainer = MyTrainer(model=model, args=args, train_dataset=torch.utils.data.TensorDataset(torch.randn(64, 8)))
    trainer.train()


if __name__ == "__main__":
    main()
'''


def test_hf_trainer_loader_override_without_sampler(tmp_path):
    body = "        return DataLoader(self.train_dataset, batch_size=self.args.train_batch_size, shuffle=True)"
    assert ID in scan_ids(tmp_path, HF.format(body=body))


@pytest.mark.parametrize("body", [
    "        return self.accelerator.prepare(DataLoader(self.train_dataset, batch_size=8, shuffle=True))",
    "        return DataLoader(self.train_dataset, batch_size=8, sampler=self._get_train_sampler())",
    "        loader = super().get_train_dataloader()\n        return loader",
    "        kwargs = self._loader_kwargs()\n        return DataLoader(self.train_dataset, **kwargs)",
])
def test_hf_trainer_override_that_shards_or_is_unknown_stays_quiet(tmp_path, body):
    assert ID not in scan_ids(tmp_path, HF.format(body=body))
