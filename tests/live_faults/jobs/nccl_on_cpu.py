"""A GPU script's process group (NCCL) started on a host without GPUs."""
import torch
import torch.distributed as dist


def main():
    dist.init_process_group("nccl")
    tensor = torch.ones(4)
    dist.all_reduce(tensor)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
