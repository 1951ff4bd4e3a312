# expect: hardcoded-cuda0
# source: https://github.com/allenai/allennlp/pull/4712
# reason: The PretrainedModelInitializer read the pretrained weights with a bare torch.load(weights_file_path); tensors saved from a GPU came back on the device they were saved from, so every distributed worker that applied the initializer allocated a copy on that GPU (wasted GPU memory); the merged fix loads them with map_location="cpu".
import argparse
import os
import re

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


class PretrainedModelInitializer:
    """Copies parameters from a saved model's state dict into the matching parameters of a new model."""

    def __init__(self, weights_file_path, parameter_name_overrides=None):
        self.weights = torch.load(weights_file_path)
        self.parameter_name_overrides = parameter_name_overrides or {}

    def __call__(self, tensor, parameter_name):
        if parameter_name in self.parameter_name_overrides:
            parameter_name = self.parameter_name_overrides[parameter_name]
        source = self.weights[parameter_name]
        if tensor.size() != source.size():
            raise ValueError(f"Incompatible sizes for {parameter_name}: {tuple(tensor.size())} vs {tuple(source.size())}")
        tensor.data.copy_(source.data)


class InitializerApplicator:
    def __init__(self, regexes_to_initializers):
        self._initializers = [(re.compile(regex), init) for regex, init in regexes_to_initializers]

    def __call__(self, module):
        for name, parameter in module.named_parameters():
            for regex, initializer in self._initializers:
                if regex.search(name):
                    initializer(parameter, name)
                    break


class TaggerModel(nn.Module):
    def __init__(self, vocab_size=30000, embedding_dim=300, hidden_dim=256, num_tags=45, initializer=None):
        super().__init__()
        self.embedder = nn.Embedding(vocab_size, embedding_dim)
        self.encoder = nn.LSTM(embedding_dim, hidden_dim, batch_first=True, bidirectional=True)
        self.tag_projection = nn.Linear(2 * hidden_dim, num_tags)
        if initializer is not None:
            initializer(self)

    def forward(self, tokens, tags):
        encoded, _ = self.encoder(self.embedder(tokens))
        logits = self.tag_projection(encoded)
        return nn.functional.cross_entropy(logits.view(-1, logits.size(-1)), tags.view(-1))


def train_worker(process_rank, args, world_size):
    cuda_device = process_rank
    dist.init_process_group(backend="nccl", init_method=f"tcp://{args.master_addr}:{args.master_port}",
                            world_size=world_size, rank=process_rank)
    torch.cuda.set_device(cuda_device)

    applicator = InitializerApplicator([
        ("embedder|encoder", PretrainedModelInitializer(args.pretrained_weights)),
    ])
    model = TaggerModel(initializer=applicator).cuda(cuda_device)
    ddp_model = DistributedDataParallel(model, device_ids=[cuda_device], find_unused_parameters=False)

    dataset = TensorDataset(torch.randint(0, 30000, (20000, 40)), torch.randint(0, 45, (20000, 40)))
    sampler = DistributedSampler(dataset, num_replicas=world_size, rank=process_rank, shuffle=True)
    loader = DataLoader(dataset, batch_size=32, sampler=sampler)
    optimizer = torch.optim.Adam(ddp_model.parameters(), lr=1e-3)

    for epoch in range(args.num_epochs):
        sampler.set_epoch(epoch)
        for tokens, tags in loader:
            loss = ddp_model(tokens.cuda(cuda_device), tags.cuda(cuda_device))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        if process_rank == 0:
            print(f"epoch {epoch} loss {loss.item():.4f}")
            torch.save(model.state_dict(), os.path.join(args.serialization_dir, f"model_state_epoch_{epoch}.th"))

    dist.destroy_process_group()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--pretrained-weights", default="pretrained/tagger_weights.th")
    parser.add_argument("--serialization-dir", default="runs/tagger")
    parser.add_argument("--num-epochs", type=int, default=20)
    parser.add_argument("--master-addr", default="127.0.0.1")
    parser.add_argument("--master-port", default="29500")
    args = parser.parse_args()
    world_size = torch.cuda.device_count()
    torch.multiprocessing.spawn(train_worker, args=(args, world_size), nprocs=world_size)
