# expect: collective-mismatch
# source: https://github.com/huggingface/transformers/issues/31532
# reason: The no-trainer Accelerate script hung at mid-epoch evaluation: the evaluation step was triggered from the progress bar's counter, but the bar was disabled on every process except the main one, so only the main process entered evaluation and waited forever in gather_for_metrics; the reporter confirmed this was the cause.
import math

import torch
from accelerate import Accelerator
from torch.utils.data import DataLoader, TensorDataset
from tqdm.auto import tqdm
from transformers import AutoModelForSequenceClassification


def evaluate(model, eval_dataloader, accelerator):
    model.eval()
    correct, total = 0, 0
    for input_ids, labels in eval_dataloader:
        with torch.no_grad():
            logits = model(input_ids=input_ids).logits
        predictions, references = accelerator.gather_for_metrics((logits.argmax(dim=-1), labels))
        correct += (predictions == references).sum().item()
        total += references.numel()
    model.train()
    return correct / max(total, 1)


def main(num_epochs=3, eval_steps=500):
    accelerator = Accelerator()
    model = AutoModelForSequenceClassification.from_pretrained("bert-base-uncased", num_labels=2)
    optimizer = torch.optim.AdamW(model.parameters(), lr=2e-5)
    train_dataloader = DataLoader(TensorDataset(torch.randint(0, 30522, (20000, 128)), torch.randint(0, 2, (20000,))),
                                  batch_size=16, shuffle=True)
    eval_dataloader = DataLoader(TensorDataset(torch.randint(0, 30522, (2000, 128)), torch.randint(0, 2, (2000,))),
                                 batch_size=32)
    model, optimizer, train_dataloader, eval_dataloader = accelerator.prepare(
        model, optimizer, train_dataloader, eval_dataloader)
    total_steps = num_epochs * math.ceil(len(train_dataloader))
    progress_bar = tqdm(range(total_steps), total=total_steps, disable=not accelerator.is_main_process)
    for epoch in range(num_epochs):
        for input_ids, labels in train_dataloader:
            loss = model(input_ids=input_ids, labels=labels).loss
            accelerator.backward(loss)
            optimizer.step()
            optimizer.zero_grad()
            progress_bar.update(1)
            if progress_bar.n % eval_steps == 0:
                accuracy = evaluate(model, eval_dataloader, accelerator)
                accelerator.print(f"step {progress_bar.n}: accuracy {accuracy:.4f}")


if __name__ == "__main__":
    main()
