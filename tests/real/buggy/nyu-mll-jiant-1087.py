# expect: dataparallel, checkpoint-without-module
# source: https://github.com/nyu-mll/jiant/issues/1087
# reason: Labelled a high-priority bug: state_dict was taken from the DataParallel wrapper, so multi-GPU checkpoints had "module." keys and silently failed to load on one GPU; the fix takes model.module.state_dict().
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset


def build_model(cuda_devices):
    model = nn.Sequential(nn.Embedding(50000, 256), nn.Flatten(), nn.Linear(256 * 64, 2))
    if len(cuda_devices) > 1:
        model = nn.DataParallel(model, device_ids=cuda_devices)
    return model.cuda(cuda_devices[0])


def save_checkpoint(model, optimizer, path):
    torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict()}, path)


def main():
    cuda_devices = list(range(torch.cuda.device_count()))
    model = build_model(cuda_devices)
    loader = DataLoader(TensorDataset(torch.randint(0, 50000, (8000, 64)), torch.randint(0, 2, (8000,))),
                        batch_size=32, shuffle=True)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-5)
    for epoch in range(3):
        for ids, labels in loader:
            loss = nn.functional.cross_entropy(model(ids.cuda()), labels.cuda())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        save_checkpoint(model, optimizer, f"model_state_pretrain_epoch_{epoch}.th")


if __name__ == "__main__":
    main()
