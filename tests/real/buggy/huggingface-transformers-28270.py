# expect: collective-mismatch
# source: https://github.com/huggingface/transformers/issues/28270
# reason: Each process built its own output directory name from a random string, so only one rank found a checkpoint to resume from: that rank blocked in checkpoint loading while the others started training, and the run failed (a hang once a barrier was added); the reporter confirmed the per-process output directory was the bug.
import os
import random
import string

import torch
from transformers import AutoModelForCausalLM, Trainer, TrainingArguments
from transformers.trainer_utils import get_last_checkpoint


class TextSet(torch.utils.data.Dataset):
    def __len__(self):
        return 1024

    def __getitem__(self, i):
        ids = torch.randint(0, 50257, (128,))
        return {"input_ids": ids, "labels": ids}


def run_name():
    suffix = "".join(random.choices(string.ascii_lowercase, k=6))
    return f"run-{suffix}"


def main():
    output_dir = os.path.join("outputs", run_name())
    args = TrainingArguments(output_dir=output_dir, per_device_train_batch_size=4, deepspeed="ds_zero2.json",
                             save_steps=100, num_train_epochs=1)
    last = get_last_checkpoint(output_dir) if os.path.isdir(output_dir) else None
    model = AutoModelForCausalLM.from_pretrained("gpt2")
    trainer = Trainer(model=model, args=args, train_dataset=TextSet())
    trainer.train(resume_from_checkpoint=last)


if __name__ == "__main__":
    main()
