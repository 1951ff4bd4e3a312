"""Spellings learnt from fresh bug reports (scan-recall2): each case with the near miss that must stay silent."""

from __future__ import annotations

from troubleshooter.scan import scan_paths

from .conftest import scan_ids


SAMPLER_LOOP = '''
import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler

dist.init_process_group("nccl")
data = TensorDataset(torch.arange(100))
sampler = DistributedSampler(data)
loader = DataLoader(data, batch_size=4, sampler=sampler)
epoch = 0
while epoch < 10:
{body}
    seen = [batch for batch in loader]
    epoch += 1
'''


def test_a_while_loop_counting_epochs_is_an_epoch_loop(tmp_path):
    assert "missing-set-epoch" in scan_ids(tmp_path, SAMPLER_LOOP.format(body=""))
    assert "missing-set-epoch" not in scan_ids(tmp_path, SAMPLER_LOOP.format(body="    sampler.set_epoch(epoch)"))


def test_set_device_matters_only_when_the_processes_touch_a_gpu(tmp_path):
    assert "missing-set-device" not in scan_ids(tmp_path, SAMPLER_LOOP.format(body=""))
    moved = SAMPLER_LOOP.format(body="") + "dist.all_reduce(torch.ones(1).to('cuda'))\n"
    assert "missing-set-device" in scan_ids(tmp_path, moved)


def test_gpu_work_in_another_module_of_the_scan_counts(tmp_path):
    (tmp_path / "dist_utils.py").write_text(
        "import torch.distributed as dist\n\ndef init_distributed():\n    dist.init_process_group('nccl')\n")
    (tmp_path / "train.py").write_text(
        "import torch.nn as nn\nfrom torch.nn.parallel import DistributedDataParallel as DDP\n"
        "from dist_utils import init_distributed\n\ninit_distributed()\nmodel = DDP(nn.Linear(4, 4).cuda())\n")
    assert "missing-set-device" in set(scan_paths([str(tmp_path)]).hits)


LIGHTNING = '''
import {package} as pl
import torch.nn as nn

def run(model, data):
    trainer = pl.Trainer(accelerator="gpu", devices=4, strategy="ddp")
    trainer.fit(model, data)
    if trainer.is_global_zero:
        trainer.save_checkpoint("final.ckpt")
'''


def test_lightning_2_save_checkpoint_on_rank_zero_only_is_a_collective_mismatch(tmp_path):
    assert "collective-mismatch" in scan_ids(tmp_path, LIGHTNING.format(package="lightning.pytorch"))
    # pytorch_lightning 1.x (latent-diffusion's pin) saved without a barrier: not claimed
    assert "collective-mismatch" not in scan_ids(tmp_path, LIGHTNING.format(package="pytorch_lightning"))


ACCELERATE = '''
import torch
from accelerate import Accelerator
from torch.utils.data import DataLoader, TensorDataset

def cycle(loader):
    while True:
        for batch in loader:
            yield batch

def main(model):
    accelerator = Accelerator()
    loader = DataLoader(TensorDataset(torch.randn(64, 3)), batch_size=8, shuffle=True)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    model, opt, {handed} = accelerator.prepare(model, opt, {given})
    for step in range(100):
        (x,) = next(iter(loader))
        accelerator.backward(model(x).sum())
        opt.step()
'''


def test_a_loader_handed_to_prepare_inside_a_generator_is_not_sharded(tmp_path):
    assert "missing-distributed-sampler" in scan_ids(tmp_path, ACCELERATE.format(handed="dl", given="cycle(loader)"))
    assert "missing-distributed-sampler" not in scan_ids(tmp_path, ACCELERATE.format(handed="loader", given="loader"))
