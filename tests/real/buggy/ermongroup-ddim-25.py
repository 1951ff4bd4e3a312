# expect: dataparallel
# source: https://github.com/ermongroup/ddim/issues/25
# reason: nn.DataParallel filled GPU 0 while the others sat half empty; the reporter moved to DistributedDataParallel and the author confirms only DataParallel was used.
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset


class Diffusion:
    def __init__(self, config):
        self.config = config
        self.device = torch.device("cuda") if torch.cuda.is_available() else torch.device("cpu")

    def train(self):
        dataset = TensorDataset(torch.randn(50000, 3, 32, 32))
        train_loader = DataLoader(dataset, batch_size=self.config["batch_size"], shuffle=True, num_workers=4)
        model = nn.Sequential(nn.Conv2d(3, 128, 3, padding=1), nn.SiLU(), nn.Conv2d(128, 3, 3, padding=1))
        model = model.to(self.device)
        model = torch.nn.DataParallel(model)
        optimizer = torch.optim.Adam(model.parameters(), lr=2e-4)
        for epoch in range(self.config["n_epochs"]):
            for (x,) in train_loader:
                x = x.to(self.device)
                e = torch.randn_like(x)
                loss = (model(x + e) - e).square().sum(dim=(1, 2, 3)).mean()
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()


if __name__ == "__main__":
    Diffusion({"batch_size": 128, "n_epochs": 10000}).train()
