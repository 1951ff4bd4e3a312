# expect: grad-accum-without-no-sync
# source: https://github.com/huggingface/accelerate/pull/106
# reason: The example accumulated gradients with accelerator.backward on every step, so DDP all-reduced each micro-batch; the maintainer agreed and Accelerate later added accumulate() for exactly this.
import torch
import torch.nn as nn
from accelerate import Accelerator
from torch.utils.data import DataLoader, TensorDataset


def training_function(config):
    accelerator = Accelerator()
    gradient_accumulation_steps = config["gradient_accumulation_steps"]
    train = TensorDataset(torch.randint(0, 30522, (3668, 128)), torch.randint(0, 2, (3668,)))
    train_dataloader = DataLoader(train, shuffle=True, batch_size=config["batch_size"])
    model = nn.Sequential(nn.Embedding(30522, 64), nn.Flatten(), nn.Linear(64 * 128, 2))
    optimizer = torch.optim.AdamW(model.parameters(), lr=config["lr"])
    model, optimizer, train_dataloader = accelerator.prepare(model, optimizer, train_dataloader)
    for epoch in range(config["num_epochs"]):
        model.train()
        for step, (input_ids, labels) in enumerate(train_dataloader):
            loss = nn.functional.cross_entropy(model(input_ids), labels)
            loss = loss / gradient_accumulation_steps
            accelerator.backward(loss)
            if step % gradient_accumulation_steps == 0:
                optimizer.step()
                optimizer.zero_grad()
        accelerator.print(f"epoch {epoch} done")


if __name__ == "__main__":
    training_function({"lr": 2e-5, "num_epochs": 3, "batch_size": 16, "gradient_accumulation_steps": 4})
