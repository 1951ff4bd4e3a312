# expect:
# seen-in: https://github.com/mosaicml/llm-foundry/blob/8c8dd48f72168c5d51e2f7b151595892a8fba43d/llmfoundry/command_utils/train.py
# Composer's dist utilities set the process group up and its Trainer runs the loop: distributed, with no
# DistributedDataParallel, init_process_group or set_device spelled in the file.
import torch
import torch.nn as nn
from composer import ComposerModel, Trainer
from composer.utils import dist, get_device
from torch.utils.data import DataLoader, TensorDataset


class Regressor(ComposerModel):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(8, 1)

    def forward(self, batch):
        x, _ = batch
        return self.net(x)

    def loss(self, outputs, batch):
        _, y = batch
        return nn.functional.mse_loss(outputs, y)


def main():
    dist.initialize_dist(get_device(None), timeout=300)
    data = TensorDataset(torch.randn(256, 8), torch.randn(256, 1))
    loader = DataLoader(data, batch_size=16, sampler=dist.get_sampler(data, shuffle=True))
    model = Regressor()
    trainer = Trainer(model=model, train_dataloader=loader, max_duration="2ep",
                      optimizers=torch.optim.SGD(model.parameters(), lr=0.1))
    trainer.fit()


if __name__ == "__main__":
    main()
