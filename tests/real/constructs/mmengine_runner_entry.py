# expect:
# seen-in: https://github.com/open-mmlab/mmengine/blob/254342938d9bde1775c39ea7d5181c5d294026c4/examples/distributed_training.py
# OpenMMLab's Runner with a pytorch launcher: the runner starts the group, builds the sampler from the config,
# wraps the model and saves checkpoints; the script only describes the parts.
import argparse

import torch
import torch.nn as nn
from mmengine.model import BaseModel
from mmengine.runner import Runner
from torch.utils.data import TensorDataset


class Regressor(BaseModel):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(8, 1)

    def forward(self, x, y, mode="tensor"):
        out = self.net(x)
        if mode == "loss":
            return {"loss": nn.functional.mse_loss(out, y)}
        return out


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--launcher", choices=["none", "pytorch", "slurm"], default="none")
    args = parser.parse_args()
    data = TensorDataset(torch.randn(256, 8), torch.randn(256, 1))
    runner = Runner(
        model=Regressor(),
        work_dir="./work_dir",
        train_dataloader=dict(batch_size=16, dataset=data, sampler=dict(type="DefaultSampler", shuffle=True)),
        optim_wrapper=dict(optimizer=dict(type=torch.optim.SGD, lr=0.1)),
        train_cfg=dict(by_epoch=True, max_epochs=2),
        launcher=args.launcher,
    )
    runner.train()


if __name__ == "__main__":
    main()
