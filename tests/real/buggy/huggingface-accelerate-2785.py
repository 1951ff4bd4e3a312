# expect: collective-mismatch
# source: https://github.com/huggingface/accelerate/issues/2785
# reason: The script hung in gather_for_metrics; the reporter found the call sat under accelerator.is_main_process, so the other processes never joined the gather.
import torch
import torch.nn as nn
from accelerate import Accelerator
from torch.utils.data import DataLoader, TensorDataset

accelerator = Accelerator(gradient_accumulation_steps=2)
model = nn.Sequential(nn.Conv2d(3, 32, 3, 2, 1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(32, 10))
trainloader = DataLoader(TensorDataset(torch.randn(50000, 3, 64, 64), torch.randint(0, 10, (50000,))), batch_size=64, shuffle=True)
testloader = DataLoader(TensorDataset(torch.randn(10000, 3, 64, 64), torch.randint(0, 10, (10000,))), batch_size=64)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
model, optimizer, trainloader, testloader = accelerator.prepare(model, optimizer, trainloader, testloader)

for epoch in range(50):
    model.train()
    for images, targets in trainloader:
        with accelerator.accumulate(model):
            loss = nn.functional.cross_entropy(model(images), targets)
            accelerator.backward(loss)
            optimizer.step()
            optimizer.zero_grad()
    model.eval()
    correct, total = 0, 0
    with torch.no_grad():
        for images, targets in testloader:
            preds = model(images).argmax(dim=-1)
            if accelerator.is_main_process:
                preds, targets = accelerator.gather_for_metrics((preds, targets))
                correct += (preds == targets).sum().item()
                total += len(targets)
    if accelerator.is_main_process:
        print(f"epoch {epoch}: accuracy {correct / total:.3f}")
