"""Meaning, not names (fixes found by bench/scan_metamorphic.py's rename_all): the accumulation count is the divisor
the step gate tests, whatever it is called."""

from __future__ import annotations

import pytest

from tests.scan.quality import shown_findings

SCRIPT = '''\
import os
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


def main(batch_size=64, max_gpu_batch=16):
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    model = DDP(torch.nn.Linear(4, 1).cuda(), device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    {count} = {initial}
    if batch_size > max_gpu_batch:
        {count} = batch_size // max_gpu_batch
    for i in range(100):
        loss = model(torch.randn(8, 4).cuda()).sum() / {count}
        loss.backward()
        if i % {count} == 0:
            optimizer.step()
            optimizer.zero_grad()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
'''


def scan(tmp_path, **names) -> set[str]:
    path = tmp_path / "train.py"
    path.write_text(SCRIPT.format(**names), encoding="utf-8")
    return set(shown_findings([str(path)])[0])


@pytest.mark.parametrize("count", ["gradient_accumulation_steps", "k", "v13"])
def test_accumulation_only_as_a_fallback_is_not_flagged_whatever_its_name(tmp_path, count):
    assert "grad-accum-without-no-sync" not in scan(tmp_path, count=count, initial=1)


@pytest.mark.parametrize("count", ["gradient_accumulation_steps", "k"])
def test_accumulation_by_default_is_flagged_whatever_its_name(tmp_path, count):
    assert "grad-accum-without-no-sync" in scan(tmp_path, count=count, initial=4)


LIGHTNING = '''\
import lightning.pytorch as pl
import torch
from torch.utils.data import DataLoader, TensorDataset


class Net(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.layer = torch.nn.Linear(8, 8)

    def training_step(self, batch, batch_idx):
        return self.layer(batch[0]).sum()

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters())


def main():
    {runner} = pl.Trainer(accelerator="gpu", devices=2, strategy="ddp", max_epochs=1)
    {runner}.fit(Net(), DataLoader(TensorDataset(torch.randn(64, 8)), batch_size=8))
    if {runner}.is_global_zero:
        {runner}.save_checkpoint("final.ckpt")


if __name__ == "__main__":
    main()
'''


@pytest.mark.parametrize("runner", ["trainer", "v9", "pl_runner"])
def test_trainer_checkpoint_on_rank_zero_found_whatever_the_trainer_is_called(tmp_path, runner):
    path = tmp_path / "train.py"
    path.write_text(LIGHTNING.format(runner=runner), encoding="utf-8")
    assert "collective-mismatch" in shown_findings([str(path)])[0]
