# expect: checkpoint-without-module
# source: https://github.com/NVIDIA/apex/issues/647
# reason: The state_dict taken from the DDP-wrapped model carries "module."-prefixed keys, so the saved weights cannot be loaded back into the plain model for inference; the maintainer confirmed this is how DDP (apex's and PyTorch's) names the wrapped module.
import os

import torch
import torch.distributed as dist
from apex.parallel import DistributedDataParallel as DDP
from torchvision.models.resnet import resnet18

os.environ.setdefault("MASTER_ADDR", "localhost")
os.environ.setdefault("MASTER_PORT", "2222")


def train_and_export(path):
    local_rank = int(os.environ.get("LOCAL_RANK", 0))
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl", init_method="env://")
    model = resnet18(weights=None).to("cuda")
    model = DDP(model, delay_allreduce=True)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(100):
        loss = model(torch.randn(32, 3, 224, 224, device="cuda")).logsumexp(1).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    if dist.get_rank() == 0:
        torch.save(model.state_dict(), path)


def load_for_inference(path):
    model = resnet18(weights=None)
    model.load_state_dict(torch.load(path, map_location="cpu"))
    return model.eval()


if __name__ == "__main__":
    train_and_export("resnet18_ddp.pt")
