# expect: grad-accum-without-no-sync
# source: https://github.com/huggingface/transformers/issues/22541
# reason: The CodeParrot training script accumulated gradients over several micro-batches and tried to skip the all-reduce on the non-final ones with `with model.no_sync(): accelerator.backward(loss)`, but the forward pass ran outside no_sync, and DDP decides during the forward whether the coming backward synchronises, so every micro-batch still all-reduced its gradients and training ran slower than necessary; the maintainer reported it and moved the accumulation to a form that disables synchronisation for the whole micro-step.
import argparse

import torch
import torch.nn as nn
from accelerate import Accelerator
from accelerate.utils import DistributedType
from torch.utils.data import DataLoader, TensorDataset


def setup_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--train_batch_size", type=int, default=2)
    parser.add_argument("--gradient_accumulation_steps", type=int, default=16)
    parser.add_argument("--learning_rate", type=float, default=5e-4)
    parser.add_argument("--max_train_steps", type=int, default=50000)
    parser.add_argument("--seq_length", type=int, default=1024)
    parser.add_argument("--save_checkpoint_steps", type=int, default=1024)
    return parser.parse_args()


class CausalLM(nn.Module):
    def __init__(self, vocab=32768, dim=512, layers=6):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        block = nn.TransformerEncoderLayer(dim, 8, 4 * dim, batch_first=True, norm_first=True)
        self.blocks = nn.TransformerEncoder(block, layers)
        self.lm_head = nn.Linear(dim, vocab, bias=False)

    def forward(self, input_ids, labels):
        mask = nn.Transformer.generate_square_subsequent_mask(input_ids.size(1), device=input_ids.device)
        logits = self.lm_head(self.blocks(self.embed(input_ids), mask=mask, is_causal=True))
        return nn.functional.cross_entropy(logits[:, :-1].reshape(-1, logits.size(-1)), labels[:, 1:].reshape(-1))


def main():
    args = setup_args()
    accelerator = Accelerator()
    samples_per_step = accelerator.state.num_processes * args.train_batch_size
    tokens = torch.randint(0, 32768, (20000, args.seq_length))
    train_dataloader = DataLoader(TensorDataset(tokens), batch_size=args.train_batch_size, shuffle=True)
    model = CausalLM()
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.learning_rate, weight_decay=0.1)
    model, optimizer, train_dataloader = accelerator.prepare(model, optimizer, train_dataloader)

    model.train()
    completed_steps = 0
    loss_tracking = 0.0
    for step, (batch,) in enumerate(train_dataloader, start=1):
        loss = model(batch, labels=batch)
        avg_loss = accelerator.gather(loss.repeat(args.train_batch_size)).mean()
        loss_tracking += avg_loss.item() / args.gradient_accumulation_steps
        loss = loss / args.gradient_accumulation_steps
        if step % args.gradient_accumulation_steps != 0:
            # Prevent backward from doing gradient all_reduce in every step
            if accelerator.distributed_type == DistributedType.MULTI_GPU:
                with model.no_sync():
                    accelerator.backward(loss)
            else:
                accelerator.backward(loss)
        else:
            accelerator.backward(loss)
            accelerator.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            optimizer.zero_grad()
            completed_steps += 1
            if accelerator.is_main_process:
                print(f"step {completed_steps}: loss {loss_tracking:.4f}, samples {step * samples_per_step}")
            loss_tracking = 0.0
            if completed_steps % args.save_checkpoint_steps == 0:
                accelerator.wait_for_everyone()
                if accelerator.is_main_process:
                    torch.save(accelerator.unwrap_model(model).state_dict(), f"ckpt-{completed_steps}.pt")
        if completed_steps >= args.max_train_steps:
            break


if __name__ == "__main__":
    main()
