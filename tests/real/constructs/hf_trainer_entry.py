# expect:
# seen-in: https://github.com/tatsu-lab/stanford_alpaca/blob/761dc5bfbdeeffa89b8bff5d038781a4055f796a/train.py
# An HF Trainer entry point launched with torchrun: the Trainer builds the distributed sampler and wraps the model.
from dataclasses import dataclass, field

import torch
import transformers
from torch.utils.data import Dataset


@dataclass
class ModelArguments:
    model_name_or_path: str = field(default="facebook/opt-125m")


class SupervisedDataset(Dataset):
    def __init__(self, tokenizer, n=1000):
        enc = tokenizer(["Below is an instruction."] * n, return_tensors="pt", padding="max_length", max_length=64)
        self.input_ids = enc["input_ids"]

    def __len__(self):
        return len(self.input_ids)

    def __getitem__(self, i):
        return {"input_ids": self.input_ids[i], "labels": self.input_ids[i]}


def train():
    parser = transformers.HfArgumentParser((ModelArguments, transformers.TrainingArguments))
    model_args, training_args = parser.parse_args_into_dataclasses()
    model = transformers.AutoModelForCausalLM.from_pretrained(model_args.model_name_or_path)
    tokenizer = transformers.AutoTokenizer.from_pretrained(model_args.model_name_or_path)
    trainer = transformers.Trainer(model=model, tokenizer=tokenizer, args=training_args,
                                   train_dataset=SupervisedDataset(tokenizer))
    trainer.train()
    trainer.save_state()
    trainer.save_model(output_dir=training_args.output_dir)


if __name__ == "__main__":
    train()
