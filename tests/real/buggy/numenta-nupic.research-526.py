# expect: unnecessary-find-unused-parameters
# source: https://github.com/numenta/nupic.research/pull/526
# reason: The transformers experiments trained BERT-style models with the HF Trainer under torch.distributed.launch and left ddp_find_unused_parameters unset, so the Trainer of that time wrapped the model with find_unused_parameters=True (its default when gradient checkpointing is off) although every parameter gets a gradient; the extra autograd traversal slowed each forward pass, and the merged PR sets ddp_find_unused_parameters=False in the shared experiment config.
import argparse
from copy import deepcopy

import torch
from torch.utils.data import Dataset
from transformers import BertConfig, BertForSequenceClassification, Trainer, TrainingArguments

BASE_EXPERIMENT = dict(
    output_dir="runs/base",
    do_train=True,
    do_eval=True,
    dataloader_drop_last=True,
    num_train_epochs=3,
    per_device_train_batch_size=32,
    per_device_eval_batch_size=64,
    learning_rate=2e-5,
    warmup_ratio=0.1,
    logging_steps=50,
    save_strategy="epoch",
    fp16=True,
)

EXPERIMENTS = {
    "base": BASE_EXPERIMENT,
    "small_lr": dict(deepcopy(BASE_EXPERIMENT), learning_rate=1e-5, output_dir="runs/small_lr"),
}


class TokenIdsDataset(Dataset):
    def __init__(self, size, seq_len=64, vocab=30522, num_labels=2, seed=0):
        gen = torch.Generator().manual_seed(seed)
        self.ids = torch.randint(0, vocab, (size, seq_len), generator=gen)
        self.labels = torch.randint(0, num_labels, (size,), generator=gen)

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, i):
        return {"input_ids": self.ids[i], "attention_mask": torch.ones_like(self.ids[i]), "labels": self.labels[i]}


def build_model(num_labels=2):
    config = BertConfig(hidden_size=256, num_hidden_layers=4, num_attention_heads=4, intermediate_size=1024,
                        num_labels=num_labels)
    return BertForSequenceClassification(config)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--experiment", default="base", choices=sorted(EXPERIMENTS))
    parser.add_argument("--local_rank", type=int, default=-1)
    cli = parser.parse_args()

    settings = dict(EXPERIMENTS[cli.experiment], local_rank=cli.local_rank)
    training_args = TrainingArguments(**settings)

    trainer = Trainer(
        model=build_model(),
        args=training_args,
        train_dataset=TokenIdsDataset(20000),
        eval_dataset=TokenIdsDataset(2000, seed=1),
    )
    trainer.train()
    trainer.evaluate()


if __name__ == "__main__":
    main()
