# expect: gradient-checkpointing-conflict
# source: https://github.com/artidoro/qlora/issues/223
# reason: Launched with torchrun, the QLoRA fine-tuning script turns on (reentrant) gradient checkpointing by default through prepare_model_for_kbit_training and the training arguments, while DDP runs with find_unused_parameters left at the Trainer's default, which is True for a PEFT-wrapped model; the backward pass then fails with "Expected to mark a variable ready only once ... marked as ready twice"; the fix proposed in PR #222 and endorsed by the maintainer is to run DDP with `ddp_find_unused_parameters=False`.
import os
from dataclasses import dataclass, field
from typing import Dict, Optional, Sequence

import torch
import transformers
from datasets import load_dataset
from peft import LoraConfig, get_peft_model, prepare_model_for_kbit_training
from transformers import (
    AutoModelForCausalLM,
    AutoTokenizer,
    BitsAndBytesConfig,
    HfArgumentParser,
    Seq2SeqTrainer,
    Seq2SeqTrainingArguments,
)

IGNORE_INDEX = -100


@dataclass
class ModelArguments:
    model_name_or_path: str = field(default="huggyllama/llama-7b")
    bits: int = field(default=4)
    double_quant: bool = field(default=True)
    quant_type: str = field(default="nf4")
    lora_r: int = field(default=64)
    lora_alpha: float = field(default=16)
    lora_dropout: float = field(default=0.05)


@dataclass
class DataArguments:
    dataset: str = field(default="tatsu-lab/alpaca")
    source_max_len: int = field(default=512)
    target_max_len: int = field(default=256)


@dataclass
class TrainingArguments(Seq2SeqTrainingArguments):
    output_dir: str = field(default="./output")
    optim: str = field(default="paged_adamw_32bit")
    per_device_train_batch_size: int = field(default=1)
    gradient_accumulation_steps: int = field(default=16)
    learning_rate: float = field(default=2e-4)
    max_steps: int = field(default=10000)
    max_grad_norm: float = field(default=0.3)
    gradient_checkpointing: bool = field(default=True, metadata={"help": "Use gradient checkpointing."})
    remove_unused_columns: bool = field(default=False)
    lr_scheduler_type: str = field(default="constant")
    logging_steps: int = field(default=10)
    save_steps: int = field(default=250)


def linear_module_names(model):
    names = set()
    for name, module in model.named_modules():
        if "Linear4bit" in type(module).__name__ or isinstance(module, torch.nn.Linear):
            names.add(name.split(".")[-1])
    names.discard("lm_head")
    return sorted(names)


def build_model(model_args, training_args):
    device_map = "auto"
    if os.environ.get("LOCAL_RANK") is not None:
        device_map = {"": int(os.environ["LOCAL_RANK"])}
    compute_dtype = torch.bfloat16 if training_args.bf16 else torch.float16
    model = AutoModelForCausalLM.from_pretrained(
        model_args.model_name_or_path,
        device_map=device_map,
        quantization_config=BitsAndBytesConfig(
            load_in_4bit=model_args.bits == 4,
            load_in_8bit=model_args.bits == 8,
            bnb_4bit_compute_dtype=compute_dtype,
            bnb_4bit_use_double_quant=model_args.double_quant,
            bnb_4bit_quant_type=model_args.quant_type,
        ),
        torch_dtype=compute_dtype,
    )
    model = prepare_model_for_kbit_training(model, use_gradient_checkpointing=training_args.gradient_checkpointing)
    lora = LoraConfig(
        r=model_args.lora_r,
        lora_alpha=model_args.lora_alpha,
        lora_dropout=model_args.lora_dropout,
        target_modules=linear_module_names(model),
        bias="none",
        task_type="CAUSAL_LM",
    )
    return get_peft_model(model, lora)


@dataclass
class CausalCollator:
    tokenizer: transformers.PreTrainedTokenizer
    source_max_len: int
    target_max_len: int

    def __call__(self, instances: Sequence[Dict]) -> Dict[str, torch.Tensor]:
        sources = [f"{self.tokenizer.bos_token}{ex['input']}" for ex in instances]
        targets = [f"{ex['output']}{self.tokenizer.eos_token}" for ex in instances]
        src = self.tokenizer(sources, max_length=self.source_max_len, truncation=True, add_special_tokens=False)
        tgt = self.tokenizer(targets, max_length=self.target_max_len, truncation=True, add_special_tokens=False)
        input_ids, labels = [], []
        for s, t in zip(src["input_ids"], tgt["input_ids"]):
            input_ids.append(torch.tensor(s + t))
            labels.append(torch.tensor([IGNORE_INDEX] * len(s) + t))
        input_ids = torch.nn.utils.rnn.pad_sequence(input_ids, batch_first=True,
                                                    padding_value=self.tokenizer.pad_token_id)
        labels = torch.nn.utils.rnn.pad_sequence(labels, batch_first=True, padding_value=IGNORE_INDEX)
        return {"input_ids": input_ids, "labels": labels, "attention_mask": input_ids.ne(self.tokenizer.pad_token_id)}


def format_alpaca(example):
    prompt = example["instruction"] + ("\n" + example["input"] if example.get("input") else "")
    return {"input": prompt, "output": example["output"]}


def train():
    parser = HfArgumentParser((ModelArguments, DataArguments, TrainingArguments))
    model_args, data_args, training_args = parser.parse_args_into_dataclasses()

    tokenizer = AutoTokenizer.from_pretrained(model_args.model_name_or_path, padding_side="right", use_fast=False)
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.unk_token
    model = build_model(model_args, training_args)
    model.config.use_cache = False

    dataset = load_dataset(data_args.dataset)["train"].map(format_alpaca,
                                                           remove_columns=["instruction", "text"])
    trainer = Seq2SeqTrainer(
        model=model,
        tokenizer=tokenizer,
        args=training_args,
        train_dataset=dataset,
        data_collator=CausalCollator(tokenizer, data_args.source_max_len, data_args.target_max_len),
    )
    trainer.train()
    trainer.save_state()
    model.save_pretrained(training_args.output_dir)


if __name__ == "__main__":
    train()
