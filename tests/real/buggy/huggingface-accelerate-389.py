# expect: gradient-checkpointing-conflict, unnecessary-find-unused-parameters
# source: https://github.com/huggingface/accelerate/issues/389
# reason: "Expected to mark a variable ready only once" with gradient checkpointing under DDP; commenters confirm gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False}) fixes it. Every parameter of this reduced model is used, so find_unused_parameters=True is also unnecessary here.
import torch
from accelerate import Accelerator, DistributedDataParallelKwargs
from torch.utils.data import DataLoader, TensorDataset
from transformers import AutoModelForSequenceClassification


def main():
    ddp_kwargs = DistributedDataParallelKwargs(find_unused_parameters=True)
    accelerator = Accelerator(kwargs_handlers=[ddp_kwargs], mixed_precision="fp16")
    with accelerator.main_process_first():
        model = AutoModelForSequenceClassification.from_pretrained("roberta-large", num_labels=2)
    model.gradient_checkpointing_enable()
    data = TensorDataset(torch.randint(0, 50265, (10000, 256)), torch.randint(0, 2, (10000,)))
    loader = DataLoader(data, batch_size=8, shuffle=True)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-5)
    model, optimizer, loader = accelerator.prepare(model, optimizer, loader)
    for epoch in range(3):
        for input_ids, labels in loader:
            loss = model(input_ids=input_ids, labels=labels).loss
            accelerator.backward(loss)
            optimizer.step()
            optimizer.zero_grad()


if __name__ == "__main__":
    main()
