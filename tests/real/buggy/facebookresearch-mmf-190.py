# expect: dataparallel
# source: https://github.com/facebookresearch/mmf/issues/190
# reason: The main GPU used far more memory than the others under nn.DataParallel; the maintainer says the cause is how DataParallel works and recommends DistributedDataParallel.
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset


def load_model(config):
    model = nn.Sequential(nn.Linear(2048, 768), nn.ReLU(), nn.Linear(768, 3129))
    model = model.to("cuda")
    if torch.cuda.device_count() > 1 and config["data_parallel"]:
        model = torch.nn.DataParallel(model)
    return model


def main(config):
    model = load_model(config)
    loader = DataLoader(TensorDataset(torch.randn(40000, 2048), torch.rand(40000, 3129)),
                        batch_size=config["batch_size"], shuffle=True, num_workers=4)
    optimizer = torch.optim.Adamax(model.parameters(), lr=5e-3)
    for epoch in range(config["max_epochs"]):
        for feats, answers in loader:
            loss = nn.functional.binary_cross_entropy_with_logits(model(feats.cuda()), answers.cuda())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()


if __name__ == "__main__":
    main({"data_parallel": True, "batch_size": 256, "max_epochs": 22})
