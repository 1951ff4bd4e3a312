# expect: none
import torch
from accelerate import Accelerator
from torch.utils.data import DataLoader, TensorDataset

accelerator = Accelerator(gradient_accumulation_steps=4)
model = torch.nn.Linear(8, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
train_loader = DataLoader(TensorDataset(torch.randn(256, 8), torch.randn(256, 1)), batch_size=16, shuffle=True)
model, optimizer, train_loader = accelerator.prepare(model, optimizer, train_loader)
for epoch in range(3):
    for x, y in train_loader:
        with accelerator.accumulate(model):
            loss = torch.nn.functional.mse_loss(model(x), y)
            accelerator.backward(loss)
            optimizer.step()
            optimizer.zero_grad()
    accelerator.print(f"epoch {epoch} done")
    if accelerator.is_main_process:
        accelerator.save(accelerator.unwrap_model(model).state_dict(), "model.pt")
