# expect: unused-parameters-error
# source: https://github.com/lucidrains/RETRO-pytorch/issues/20
# reason: The retrieval-augmented model built a second projection from the encoder output to the decoder width (encoder_output_to_decoder_dim) next to the one forward actually uses (to_decoder_model_dim); the extra Linear never took part in the loss, so DDP training failed with 'Expected to have finished reduction in the prior iteration'. The maintainer confirmed the layer was redundant (the encoder already outputs the decoder width) and removed it.
import os

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, Dataset
from torch.utils.data.distributed import DistributedSampler


class ChunkDataset(Dataset):
    def __init__(self, num_seqs=1024, seq_len=64, num_chunks=4, chunk_len=16, vocab=512):
        self.seqs = torch.randint(0, vocab, (num_seqs, seq_len + 1))
        self.retrieved = torch.randint(0, vocab, (num_seqs, num_chunks, 2, chunk_len))

    def __len__(self):
        return len(self.seqs)

    def __getitem__(self, i):
        return self.seqs[i], self.retrieved[i]


class Encoder(nn.Module):
    def __init__(self, dim, output_dim, depth=2):
        super().__init__()
        layer = nn.TransformerEncoderLayer(dim, nhead=4, batch_first=True)
        self.layers = nn.TransformerEncoder(layer, depth)
        self.project_out = nn.Linear(dim, output_dim)

    def forward(self, x):
        return self.project_out(self.layers(x))


class RETRO(nn.Module):
    def __init__(self, num_tokens=512, enc_dim=128, dec_dim=256, chunk_size=16):
        super().__init__()
        self.chunk_size = chunk_size
        self.token_emb = nn.Embedding(num_tokens, enc_dim)
        self.dec_token_emb = nn.Embedding(num_tokens, dec_dim)
        self.encoder = Encoder(enc_dim, output_dim=dec_dim)
        self.to_decoder_model_dim = nn.Linear(enc_dim, dec_dim)
        self.encoder_output_to_decoder_dim = nn.Linear(enc_dim, dec_dim)
        layer = nn.TransformerDecoderLayer(dec_dim, nhead=8, batch_first=True)
        self.decoder = nn.TransformerDecoder(layer, 2)
        self.to_logits = nn.Linear(dec_dim, num_tokens)

    def forward(self, seq, retrieved):
        b, n, k, r = retrieved.shape
        neighbours = self.token_emb(retrieved.view(b, n * k * r))
        encoded = self.encoder(neighbours)
        tokens = self.dec_token_emb(seq) + self.to_decoder_model_dim(self.token_emb(seq))
        hidden = self.decoder(tokens, encoded)
        return self.to_logits(hidden)


def main():
    dist.init_process_group(backend="nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    device = torch.device("cuda", local_rank)

    retro = RETRO().to(device)
    retro = DistributedDataParallel(retro, device_ids=[local_rank])
    optim = torch.optim.AdamW(retro.parameters(), lr=3e-4, weight_decay=0.01)

    dataset = ChunkDataset()
    sampler = DistributedSampler(dataset, shuffle=True)
    loader = DataLoader(dataset, batch_size=8, sampler=sampler, num_workers=2)

    for epoch in range(10):
        sampler.set_epoch(epoch)
        for seq, retrieved in loader:
            seq, retrieved = seq.to(device), retrieved.to(device)
            inputs, labels = seq[:, :-1], seq[:, 1:]
            logits = retro(inputs, retrieved)
            loss = F.cross_entropy(logits.transpose(1, 2), labels)
            optim.zero_grad()
            loss.backward()
            optim.step()
        if dist.get_rank() == 0:
            torch.save(retro.module.state_dict(), f"retro-{epoch}.pt")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
