# expect: gradient-checkpointing-conflict
# source: https://github.com/huggingface/accelerate/issues/2017
# reason: Fine-tuning a vision-language model with LoRA under Accelerate first failed with unused parameters; with DistributedDataParallelKwargs(find_unused_parameters=True) plus gradient checkpointing enabled on the model it then failed with 'Expected to mark a variable ready only once'; the reporter confirmed, after the maintainer's suggestion, that gradient checkpointing cannot be combined with DDP's find_unused_parameters and it worked once one of them was dropped.
import torch
from accelerate import Accelerator, DistributedDataParallelKwargs
from peft import LoraConfig, get_peft_model
from torch.utils.data import DataLoader, TensorDataset
from transformers import Blip2ForConditionalGeneration


def main():
    ddp_kwargs = DistributedDataParallelKwargs(find_unused_parameters=True)
    accelerator = Accelerator(mixed_precision="fp16", kwargs_handlers=[ddp_kwargs])
    model = Blip2ForConditionalGeneration.from_pretrained("Salesforce/blip2-opt-2.7b")
    model.gradient_checkpointing_enable()
    lora = LoraConfig(r=16, lora_alpha=32, lora_dropout=0.05, target_modules=["q_proj", "k_proj", "qkv"])
    model = get_peft_model(model, lora)
    optimizer = torch.optim.AdamW(model.parameters(), lr=5e-5)
    data = TensorDataset(torch.randn(256, 3, 224, 224), torch.randint(0, 50272, (256, 32)))
    loader = DataLoader(data, batch_size=4, shuffle=True)
    model, optimizer, loader = accelerator.prepare(model, optimizer, loader)
    model.train()
    for epoch in range(3):
        for pixel_values, input_ids in loader:
            outputs = model(pixel_values=pixel_values, input_ids=input_ids, labels=input_ids)
            accelerator.backward(outputs.loss)
            optimizer.step()
            optimizer.zero_grad()
        accelerator.wait_for_everyone()
        if accelerator.is_main_process:
            accelerator.unwrap_model(model).save_pretrained(f"blip2-lora-{epoch}")


if __name__ == "__main__":
    main()
