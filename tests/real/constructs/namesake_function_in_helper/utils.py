import torch
import torch.distributed as dist


def load_pretrained(model):
    return model


def save_checkpoint(model, epoch, path):
    torch.save({"model": model.state_dict(), "epoch": epoch}, path)
    if dist.get_rank() == 0:
        print(f"saved {path}")
