import torch.nn as nn
from transformers import AutoModel, AutoTokenizer


class Captioner(nn.Module):
    def __init__(self, name):
        super().__init__()
        self.tokenizer = AutoTokenizer.from_pretrained(name)
        self.encoder = AutoModel.from_pretrained(name)
        self.head = nn.Linear(self.encoder.config.hidden_size, 1)

    def forward(self, ids):
        return self.head(self.encoder(ids).last_hidden_state)
