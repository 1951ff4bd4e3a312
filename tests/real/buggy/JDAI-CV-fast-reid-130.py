# expect: dataparallel
# source: https://github.com/JDAI-CV/fast-reid/issues/130
# reason: GPU load imbalance capped the batch at 64 on 4 GPUs; the maintainers replaced DataParallel with DDP training to fix it.
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset


class DefaultTrainer:
    def __init__(self, cfg):
        self.cfg = cfg
        model = self.build_model(cfg)
        if cfg["num_gpus"] > 1:
            model = nn.DataParallel(model)
        self.model = model.cuda()
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=3.5e-4)
        self.data_loader = DataLoader(TensorDataset(torch.randn(12936, 3, 256, 128), torch.randint(0, 751, (12936,))),
                                      batch_size=cfg["ims_per_batch"], shuffle=True, num_workers=8, drop_last=True)

    @staticmethod
    def build_model(cfg):
        return nn.Sequential(nn.Conv2d(3, 64, 7, 2, 3), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(64, 751))

    def train(self):
        for epoch in range(self.cfg["max_epoch"]):
            for img, pid in self.data_loader:
                loss = nn.functional.cross_entropy(self.model(img.cuda()), pid.cuda())
                self.optimizer.zero_grad()
                loss.backward()
                self.optimizer.step()


if __name__ == "__main__":
    DefaultTrainer({"num_gpus": torch.cuda.device_count(), "ims_per_batch": 64, "max_epoch": 120}).train()
