# expect: checkpoint-without-module
# source: https://github.com/ray-project/ray/pull/30705
# reason: The training loop saved model.state_dict() of the model returned by train.torch.prepare_model, a DistributedDataParallel wrapper, so the checkpoint keys carried a "module." prefix; the merged fix strips it in TorchCheckpoint.
import torch
import torch.nn as nn
from ray import train
from ray.air import session
from ray.air.checkpoint import Checkpoint
from ray.air.config import ScalingConfig
from ray.train.torch import TorchTrainer


def train_loop_per_worker(config):
    model = nn.Sequential(nn.Linear(1, 32), nn.ReLU(), nn.Linear(32, 1))
    model = train.torch.prepare_model(model)
    dataset = torch.utils.data.TensorDataset(torch.randn(2048, 1), torch.randn(2048, 1))
    loader = train.torch.prepare_data_loader(torch.utils.data.DataLoader(dataset, batch_size=config["batch_size"]))
    optimizer = torch.optim.SGD(model.parameters(), lr=config["lr"])
    for epoch in range(config["epochs"]):
        for x, y in loader:
            loss = nn.functional.mse_loss(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        state = model.state_dict()
        session.report({"loss": loss.item()}, checkpoint=Checkpoint.from_dict({"epoch": epoch, "model": state}))


if __name__ == "__main__":
    trainer = TorchTrainer(train_loop_per_worker, train_loop_config={"lr": 1e-2, "batch_size": 32, "epochs": 10},
                           scaling_config=ScalingConfig(num_workers=4, use_gpu=True))
    trainer.fit()
