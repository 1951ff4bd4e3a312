# expect: missing-set-epoch
# source: https://github.com/LambdaLabsML/distributed-training-guide/issues/40
# reason: The guide's DDP training script shards the data with a shuffling DistributedSampler but never calls sampler.set_epoch in its resumable epoch loop, so every epoch replays the same order; the maintainers filed it to set the sampler's seed and call set_epoch in the loop.
import argparse
import json
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler
from transformers import AutoConfig, AutoModelForCausalLM


def get_parser():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model-name", default="gpt2")
    parser.add_argument("--num-epochs", type=int, default=100)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--lr", type=float, default=3e-5)
    parser.add_argument("--save-dir", default="outputs")
    return parser


def main():
    args = get_parser().parse_args()
    rank = int(os.environ["RANK"])
    local_rank = int(os.environ["LOCAL_RANK"])
    device = torch.device(f"cuda:{local_rank}")
    torch.cuda.set_device(device)
    dist.init_process_group(rank=rank, world_size=int(os.environ["WORLD_SIZE"]), device_id=device)

    config = AutoConfig.from_pretrained(args.model_name)
    with device:
        model = AutoModelForCausalLM.from_config(config)
    model = DistributedDataParallel(model, device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)

    train_data = TensorDataset(torch.randint(0, config.vocab_size, (20000, 1024)))
    dataloader = DataLoader(train_data, batch_size=args.batch_size, drop_last=True,
                            sampler=DistributedSampler(train_data, drop_last=True))

    state = {"epoch": 0, "global_step": 0, "epoch_step": 0}
    resume = os.path.exists(os.path.join(args.save_dir, "state.json"))
    if resume:
        with open(os.path.join(args.save_dir, "state.json")) as fp:
            state = json.load(fp)

    for state["epoch"] in range(state["epoch"], args.num_epochs):
        batches = iter(dataloader)
        for i_step in range(len(dataloader)):
            (input_ids,) = next(batches)
            if i_step < state["epoch_step"]:
                continue
            input_ids = input_ids.to(device)
            loss = model(input_ids=input_ids, labels=input_ids).loss
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            state["global_step"] += 1
            state["epoch_step"] += 1
        state["epoch_step"] = 0
        if rank == 0:
            os.makedirs(args.save_dir, exist_ok=True)
            torch.save(model.module.state_dict(), os.path.join(args.save_dir, "model.pt"))
            with open(os.path.join(args.save_dir, "state.json"), "w") as fp:
                json.dump(state, fp)
        dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
