# expect: logging-from-all-ranks
# source: https://github.com/NVIDIA-BioNeMo/bionemo-recipes/pull/1232
# reason: The Accelerate training recipe initialised Weights & Biases on every process, giving duplicate runs and inconsistent metrics; the merged fix initialises it on the global main process only.
import hydra
import torch
import wandb
from accelerate import Accelerator
from omegaconf import DictConfig, OmegaConf
from torch.utils.data import DataLoader, TensorDataset
from transformers import AutoConfig, AutoModelForMaskedLM


@hydra.main(config_path="hydra_config", config_name="L0_sanity", version_base="1.2")
def main(args: DictConfig):
    accelerator = Accelerator(gradient_accumulation_steps=args.grad_acc_steps)
    wandb.init(**args.wandb_init_args, config=OmegaConf.to_container(args, resolve=True))

    config = AutoConfig.from_pretrained(args.model_tag)
    model = AutoModelForMaskedLM.from_config(config)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)
    dataset = TensorDataset(torch.randint(0, config.vocab_size, (4096, 512)))
    loader = DataLoader(dataset, batch_size=args.micro_batch_size, shuffle=True)
    model, optimizer, loader = accelerator.prepare(model, optimizer, loader)

    step = 0
    for (input_ids,) in loader:
        with accelerator.accumulate(model):
            outputs = model(input_ids=input_ids, labels=input_ids)
            accelerator.backward(outputs.loss)
            optimizer.step()
            optimizer.zero_grad()
        step += 1
        wandb.log({"train/loss": outputs.loss.item(), "train/step": step})
        if step >= args.num_train_steps:
            break
    wandb.finish()


if __name__ == "__main__":
    main()
