# expect:
# seen-in: https://github.com/microsoft/DeepSpeedExamples/blob/83757d9c937daabd1089a08051061706cb73900d/training/cifar/cifar10_deepspeed.py
# A DeepSpeed entry point: deepspeed.initialize builds the engine and the distributed training loader.
import argparse

import deepspeed
import torch
import torch.nn as nn
from torch.utils.data import TensorDataset


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--local_rank", type=int, default=-1)
    parser.add_argument("--epochs", type=int, default=30)
    parser = deepspeed.add_config_arguments(parser)
    args = parser.parse_args()
    deepspeed.init_distributed()
    trainset = TensorDataset(torch.randn(50000, 3 * 32 * 32), torch.randint(0, 10, (50000,)))
    net = nn.Sequential(nn.Linear(3 * 32 * 32, 512), nn.ReLU(), nn.Linear(512, 10))
    model_engine, optimizer, trainloader, _ = deepspeed.initialize(args=args, model=net,
                                                                   model_parameters=net.parameters(),
                                                                   training_data=trainset)
    local_device = model_engine.local_rank
    for epoch in range(args.epochs):
        for i, (inputs, labels) in enumerate(trainloader):
            outputs = model_engine(inputs.to(local_device))
            loss = nn.functional.cross_entropy(outputs, labels.to(local_device))
            model_engine.backward(loss)
            model_engine.step()
            if model_engine.global_rank == 0 and i % 2000 == 1999:
                print(f"[{epoch + 1}, {i + 1:5d}] loss: {loss.item():.3f}")


if __name__ == "__main__":
    main()
