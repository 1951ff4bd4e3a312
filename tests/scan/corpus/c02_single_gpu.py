# expect: none
# No distributed training at all: pitfalls of DDP do not apply.
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

device = torch.device("cuda:0")
ds = TensorDataset(torch.randn(1000, 10), torch.randint(0, 2, (1000,)))
loader = DataLoader(ds, batch_size=32, shuffle=True, num_workers=4)
model = nn.Sequential(nn.Linear(10, 32), nn.BatchNorm1d(32), nn.ReLU(), nn.Linear(32, 2)).to(device)
criterion = nn.CrossEntropyLoss(weight=torch.tensor([1.0, 2.0]))
opt = torch.optim.Adam(model.parameters())
for epoch in range(10):
    for x, y in loader:
        loss = criterion(model(x.to(device)).cpu(), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        print(epoch, loss.item())
    torch.save(model.state_dict(), "model.pt")
