"""grad-accum-without-no-sync: a warning needs the file to show an accumulation count above 1 (issue 11).

Without ``no_sync`` every micro-step all-reduces; the harm is real only when the count exceeds 1. DPR reads
``cfg.train.gradient_accumulation_steps`` from Hydra YAML and Latte ``args.gradient_accumulation_steps`` from
OmegaConf YAML, and every config both ship sets it to 1: the scan cannot see a count above 1, so the finding is
advice (info), not a warning. A count the file shows above 1 still warns: a literal, an option default, a keyword or
a dict a caller passes, a computed count (``max(round(64 / batch), 1)``, ``global // (micro * world)``), a
``config.get("accum", 4)`` fallback.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.scan.conftest import shown_ids

ID = "grad-accum-without-no-sync"

TEMPLATE = '''
import argparse
import json
import os
import torch
import torch.distributed as dist
import torch.nn as nn
import yaml
from torch.nn.parallel import DistributedDataParallel as DDP
{imports}


def train(model, opt, loader, accum):
    for step, x in enumerate(loader):
        loss = model(x.cuda()).pow(2).mean() / accum
        loss.backward()
        if (step + 1) % accum == 0:
            opt.step()
            opt.zero_grad()


{entry}
    dist.init_process_group("nccl")
    local = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local)
    net = DDP(nn.Linear(8, 1).cuda(), device_ids=[local])
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    loader = [torch.randn(4, 8) for _ in range(64)]
{count}
    train(net, opt, loader, accum)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
'''

PLAIN = ("", "def main():")
UNSEEN = {
    "Hydra cfg": ("import hydra", '@hydra.main(config_path="conf", config_name="train")\ndef main(cfg):',
                  "    accum = cfg.train.gradient_accumulation_steps"),
    "OmegaConf file": ("from omegaconf import OmegaConf", "def main():",
                       '    args = OmegaConf.load("configs/train.yaml")\n    accum = args.gradient_accumulation_steps'),
    "YAML dict": ("", "def main():",
                  '    cfg = yaml.safe_load(open("config.yaml"))\n    accum = cfg["accumulate_grad_batches"]'),
    "JSON, other names": ("", "def main():",
                          '    with open("hparams.json") as f:\n        hp = json.load(f)\n    accum = hp["grad_accum"]'),
}
SEEN = {
    "literal": (*PLAIN, "    accum = 8"),
    "option default": (*PLAIN, '    p = argparse.ArgumentParser()\n    p.add_argument("--accum", type=int, default=4)\n'
                               "    args = p.parse_args()\n    accum = args.accum"),
    "computed from the batch": (*PLAIN, "    batch = 16\n    accum = max(round(64 / batch), 1)"),
    "global over micro batch": (*PLAIN, '    world = dist.get_world_size()\n    accum = 512 // (8 * world)'),
    "config get fallback": ("", "def main():",
                            '    cfg = yaml.safe_load(open("config.yaml"))\n    accum = cfg.get("accum", 4)'),
}


def _warned(tmp_path: Path, imports: str, entry: str, count: str) -> bool:
    return ID in shown_ids(tmp_path, TEMPLATE.format(imports=imports, entry=entry, count=count))


@pytest.mark.parametrize("case", UNSEEN, ids=list(UNSEEN))
def test_count_read_only_from_an_unseen_config_is_advice(tmp_path, case):
    assert not _warned(tmp_path, *UNSEEN[case])


@pytest.mark.parametrize("case", SEEN, ids=list(SEEN))
def test_count_the_file_shows_above_one_still_warns(tmp_path, case):
    assert _warned(tmp_path, *SEEN[case])


PASSED = '''
import os
import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


class Trainer:
    def __init__(self, model, opt, accumulation=1):
        self.model, self.opt, self.accumulation = model, opt, accumulation

    def fit(self, loader):
        for i, x in enumerate(loader):
            (self.model(x.cuda()).mean() / self.accumulation).backward()
            if (i + 1) % self.accumulation == 0:
                self.opt.step()
                self.opt.zero_grad()


def run(config):
    dist.init_process_group("nccl")
    local = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local)
    net = DDP(nn.Linear(8, 1).cuda(), device_ids=[local])
    trainer = Trainer(net, torch.optim.SGD(net.parameters(), lr=0.1), accumulation={given})
    trainer.fit([torch.randn(4, 8) for _ in range(64)])


if __name__ == "__main__":
    run({{"accum": 4, "lr": 0.1}})
'''


@pytest.mark.parametrize("given, warns", [("8", True), ('config["accum"]', True), ("config.accum_steps", False)])
def test_count_handed_to_a_trainer_is_followed_to_the_caller(tmp_path, given, warns):
    assert (ID in shown_ids(tmp_path, PASSED.format(given=given))) is warns
