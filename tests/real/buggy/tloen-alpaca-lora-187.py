# expect: logging-from-all-ranks
# source: https://github.com/tloen/alpaca-lora/pull/187
# reason: Launched with torchrun on several GPUs, finetune.py printed its whole settings banner once per GPU; the merged PR prints it from rank 0 only.
import os

import fire
import torch
import transformers
from datasets import load_dataset
from peft import LoraConfig, get_peft_model
from transformers import LlamaForCausalLM, LlamaTokenizer


def train(base_model: str = "", data_path: str = "yahma/alpaca-cleaned", output_dir: str = "./lora-alpaca",
          batch_size: int = 128, micro_batch_size: int = 4, num_epochs: int = 3, learning_rate: float = 3e-4,
          lora_r: int = 8, lora_alpha: int = 16):
    print(
        f"Training Alpaca-LoRA model with params:\n"
        f"base_model: {base_model}\n"
        f"data_path: {data_path}\n"
        f"output_dir: {output_dir}\n"
        f"batch_size: {batch_size}\n"
        f"micro_batch_size: {micro_batch_size}\n"
        f"num_epochs: {num_epochs}\n"
        f"learning_rate: {learning_rate}\n"
        f"lora_r: {lora_r}\n"
        f"lora_alpha: {lora_alpha}\n"
    )
    gradient_accumulation_steps = batch_size // micro_batch_size
    device_map = "auto"
    world_size = int(os.environ.get("WORLD_SIZE", 1))
    ddp = world_size != 1
    if ddp:
        device_map = {"": int(os.environ.get("LOCAL_RANK") or 0)}
        gradient_accumulation_steps = gradient_accumulation_steps // world_size
    model = LlamaForCausalLM.from_pretrained(base_model, torch_dtype=torch.float16, device_map=device_map)
    tokenizer = LlamaTokenizer.from_pretrained(base_model)
    tokenizer.pad_token_id = 0
    model = get_peft_model(model, LoraConfig(r=lora_r, lora_alpha=lora_alpha, target_modules=["q_proj", "v_proj"],
                                             lora_dropout=0.05, bias="none", task_type="CAUSAL_LM"))
    data = load_dataset("json", data_files=data_path)
    train_data = data["train"].shuffle().map(lambda p: tokenizer(p["instruction"] + p["output"], truncation=True))
    trainer = transformers.Trainer(
        model=model,
        train_dataset=train_data,
        args=transformers.TrainingArguments(per_device_train_batch_size=micro_batch_size,
                                            gradient_accumulation_steps=gradient_accumulation_steps,
                                            num_train_epochs=num_epochs, learning_rate=learning_rate, fp16=True,
                                            output_dir=output_dir, ddp_find_unused_parameters=False if ddp else None),
        data_collator=transformers.DataCollatorForSeq2Seq(tokenizer, pad_to_multiple_of=8, return_tensors="pt",
                                                          padding=True),
    )
    trainer.train()
    model.save_pretrained(output_dir)


if __name__ == "__main__":
    fire.Fire(train)
