# expect: collective-mismatch
# source: https://github.com/huggingface/accelerate/issues/2690
# reason: After training, the main process saved the model while the other processes called accelerator.wait_for_everyone() in the else branch; the main process never reached a matching barrier, so the GPUs hung until the timeout. The barrier must be called by every process (before the main-process save).
import torch
from accelerate import Accelerator
from torch.utils.data import DataLoader, TensorDataset
from transformers import AutoModelForCausalLM, AutoTokenizer


def main(output_dir="out", num_epochs=3):
    accelerator = Accelerator(gradient_accumulation_steps=4)
    tokenizer = AutoTokenizer.from_pretrained("gpt2")
    model = AutoModelForCausalLM.from_pretrained("gpt2")
    data = TensorDataset(torch.randint(0, 50000, (2000, 256)))
    train_dataloader = DataLoader(data, batch_size=4, shuffle=True)
    optimizer = torch.optim.AdamW(model.parameters(), lr=5e-5)
    model, optimizer, train_dataloader = accelerator.prepare(model, optimizer, train_dataloader)
    for epoch in range(num_epochs):
        model.train()
        for (tokens,) in train_dataloader:
            with accelerator.accumulate(model):
                loss = model(input_ids=tokens, labels=tokens).loss
                accelerator.backward(loss)
                optimizer.step()
                optimizer.zero_grad()

    if accelerator.is_main_process:
        unwrapped_model = accelerator.unwrap_model(model)
        state_dict = accelerator.get_state_dict(model)
        unwrapped_model.save_pretrained(output_dir, state_dict=state_dict, safe_serialization=True)
        tokenizer.save_pretrained(output_dir)
    else:
        accelerator.wait_for_everyone()


if __name__ == "__main__":
    main()
