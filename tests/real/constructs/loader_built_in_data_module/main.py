# expect:
# seen-in: https://github.com/allenai/open-instruct/blob/e6c3044aa6201c8bfa4573c1b03142af599e730d/open_instruct/finetune.py
# The training loader is built in a data module of the project and returned; the entry hands it to Accelerate's
# prepare, which shards it per process: no DistributedSampler is needed where it is built. (The evaluation loader is
# sharded by hand with a DistributedSampler: the project is also raw torch.distributed.)
import torch
import torch.nn as nn
from accelerate import Accelerator

from data import build_eval_loader, build_train_loader


def main():
    accelerator = Accelerator(gradient_accumulation_steps=1)
    model = nn.Linear(16, 2)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    train_loader, _ = build_train_loader(batch_size=32)
    model, optimizer, train_loader = accelerator.prepare(model, optimizer, train_loader)
    for epoch in range(3):
        for x, y in train_loader:
            with accelerator.accumulate(model):
                loss = nn.functional.cross_entropy(model(x), y)
                accelerator.backward(loss)
                optimizer.step()
                optimizer.zero_grad()
    eval_loader = build_eval_loader(64, accelerator.process_index, accelerator.num_processes)
    model.eval()
    with torch.no_grad():
        correct = sum((model(x.to(accelerator.device)).argmax(-1) == y.to(accelerator.device)).sum() for x, y in eval_loader)
    accelerator.print(accelerator.reduce(correct, reduction="sum"))
    accelerator.end_training()


if __name__ == "__main__":
    main()
