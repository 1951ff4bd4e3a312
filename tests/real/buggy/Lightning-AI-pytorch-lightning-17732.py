# expect: hf-cache-contention
# source: https://github.com/Lightning-AI/pytorch-lightning/pull/17732
# reason: In the Fabric image-classifier example every rank downloaded CIFAR-10 into the same directory at once; on a shared filesystem one rank could verify the archive while another was still writing it. The merged fix downloads once before the processes start.
import torch
import torch.nn as nn
import torch.nn.functional as F
import torchvision.transforms as T
from lightning.fabric import Fabric
from torchvision.datasets import CIFAR10

DATASETS_PATH = "./data"


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 6, 5)
        self.conv2 = nn.Conv2d(6, 16, 5)
        self.fc1 = nn.Linear(16 * 5 * 5, 120)
        self.fc2 = nn.Linear(120, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        return self.fc2(F.relu(self.fc1(torch.flatten(x, 1))))


def run(fabric, epochs=10):
    transform = T.Compose([T.ToTensor(), T.Normalize((0.5, 0.5, 0.5), (0.5, 0.5, 0.5))])
    train_set = CIFAR10(root=DATASETS_PATH, train=True, download=True, transform=transform)
    test_set = CIFAR10(root=DATASETS_PATH, train=False, download=True, transform=transform)
    train_loader = torch.utils.data.DataLoader(train_set, batch_size=32, shuffle=True, num_workers=2)
    test_loader = torch.utils.data.DataLoader(test_set, batch_size=32, num_workers=2)
    train_loader, test_loader = fabric.setup_dataloaders(train_loader, test_loader)
    model = Net()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.001, momentum=0.9)
    model, optimizer = fabric.setup(model, optimizer)
    for epoch in range(epochs):
        model.train()
        for images, labels in train_loader:
            optimizer.zero_grad()
            loss = F.cross_entropy(model(images), labels)
            fabric.backward(loss)
            optimizer.step()
        model.eval()
        correct = torch.tensor(0, device=fabric.device)
        with torch.no_grad():
            for images, labels in test_loader:
                correct += (model(images).argmax(1) == labels).sum()
        correct = fabric.all_reduce(correct, reduce_op="sum")
        fabric.print(f"epoch {epoch}: test accuracy {correct.item() / len(test_set):.3f}")


if __name__ == "__main__":
    fabric = Fabric(accelerator="cuda", devices=4, strategy="ddp")
    fabric.launch(run)
