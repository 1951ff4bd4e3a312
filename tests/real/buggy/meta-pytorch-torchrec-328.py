# expect: missing-set-device
# source: https://github.com/meta-pytorch/torchrec/issues/328
# reason: Each torchrun process built its device as torch.device(f"cuda:{rank}") and initialised the NCCL process group, but never called torch.cuda.set_device, so the sharded model's NCCL communicators were created against GPU 0 and instantiating DistributedModelParallel failed with an NCCL error; the reporter's fix (set_device before the process group) was confirmed by the maintainer as required.
import os

import torch
import torch.distributed as dist
from torch import nn
from torchrec import EmbeddingBagCollection, EmbeddingBagConfig
from torchrec.distributed.model_parallel import DistributedModelParallel
from torchrec.models.dlrm import DLRM
from torchrec.optim.keyed import KeyedOptimizerWrapper


def build_model(device):
    tables = [EmbeddingBagConfig(name=f"t_{i}", embedding_dim=64, num_embeddings=10000,
                                 feature_names=[f"f_{i}"]) for i in range(4)]
    ebc = EmbeddingBagCollection(tables=tables, device=torch.device("meta"))
    return DLRM(embedding_bag_collection=ebc, dense_in_features=13,
                dense_arch_layer_sizes=[128, 64], over_arch_layer_sizes=[64, 1], dense_device=device)


def main():
    rank = int(os.environ["LOCAL_RANK"])
    if torch.cuda.is_available():
        device = torch.device(f"cuda:{rank}")
        backend = "nccl"
    else:
        device = torch.device("cpu")
        backend = "gloo"
    dist.init_process_group(backend=backend)

    model = DistributedModelParallel(module=build_model(device), device=device)
    optimizer = KeyedOptimizerWrapper(dict(model.named_parameters()),
                                      lambda params: torch.optim.SGD(params, lr=0.01))
    loss_fn = nn.BCEWithLogitsLoss()
    for _ in range(100):
        dense = torch.randn(256, 13, device=device)
        labels = torch.randint(0, 2, (256,), device=device).float()
        logits = model(dense)
        loss = loss_fn(logits.squeeze(-1), labels)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


if __name__ == "__main__":
    main()
