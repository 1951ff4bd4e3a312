# expect:
# seen-in: https://github.com/huggingface/accelerate/blob/16cb6eb80dd9aa8b4df1a63ef57863e455d53b83/examples/nlp_example.py
# An Accelerate entry point: prepare() shards the loader and wraps the model; accumulate() handles no_sync.
import torch
import torch.nn as nn
from accelerate import Accelerator
from torch.utils.data import DataLoader, TensorDataset


def training_function(config):
    accelerator = Accelerator(gradient_accumulation_steps=config["accum"])
    train = TensorDataset(torch.randint(0, 30522, (3668, 128)), torch.randint(0, 2, (3668,)))
    train_dataloader = DataLoader(train, shuffle=True, batch_size=config["batch_size"])
    model = nn.Sequential(nn.Embedding(30522, 64), nn.Flatten(), nn.Linear(64 * 128, 2))
    optimizer = torch.optim.AdamW(model.parameters(), lr=config["lr"])
    model, optimizer, train_dataloader = accelerator.prepare(model, optimizer, train_dataloader)
    for epoch in range(config["num_epochs"]):
        model.train()
        for step, (input_ids, labels) in enumerate(train_dataloader):
            with accelerator.accumulate(model):
                loss = nn.functional.cross_entropy(model(input_ids), labels)
                accelerator.backward(loss)
                optimizer.step()
                optimizer.zero_grad()
        accelerator.print(f"epoch {epoch}: loss {loss.item():.4f}")
    accelerator.wait_for_everyone()
    if accelerator.is_main_process:
        torch.save(accelerator.unwrap_model(model).state_dict(), "model.pt")


if __name__ == "__main__":
    training_function({"lr": 2e-5, "num_epochs": 3, "batch_size": 16, "accum": 2})
