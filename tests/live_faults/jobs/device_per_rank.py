"""Each rank puts its model on cuda:LOCAL_RANK, as GPU scripts do; on a host without that GPU it fails."""
import os

import torch
import torch.distributed as dist


def main():
    dist.init_process_group("gloo")
    device = torch.device(f"cuda:{os.environ['LOCAL_RANK']}")
    model = torch.nn.Linear(4, 4).to(device)
    dist.all_reduce(model.weight.data.sum().cpu())
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
