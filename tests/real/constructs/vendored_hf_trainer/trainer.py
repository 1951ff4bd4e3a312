import torch
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, IterableDataset
from transformers.trainer_callback import CallbackHandler, TrainerState
from transformers.trainer_pt_utils import IterableDatasetShard


class Trainer:
    """A trimmed copy of the HF Trainer's loader and wrap logic."""

    def __init__(self, model, args, train_dataset, tokenizer=None):
        self.model, self.args, self.train_dataset, self.tokenizer = model, args, train_dataset, tokenizer
        self.state = TrainerState()
        self.callback_handler = CallbackHandler([], model, tokenizer, None, None)

    def get_train_dataloader(self):
        dataset = self.train_dataset
        if isinstance(dataset, IterableDataset) and self.args.world_size > 1:
            dataset = IterableDatasetShard(dataset, batch_size=self.args.train_batch_size,
                                           num_processes=self.args.world_size, process_index=self.args.process_index)
            return DataLoader(dataset, batch_size=self.args.train_batch_size)
        return DataLoader(dataset, batch_size=self.args.train_batch_size, sampler=self._sampler())

    def _sampler(self):
        if self.args.world_size > 1:
            return torch.utils.data.DistributedSampler(self.train_dataset, rank=self.args.process_index)
        return torch.utils.data.RandomSampler(self.train_dataset)

    def _wrap_model(self, model):
        if self.args.local_rank != -1:
            model = DistributedDataParallel(model.to(self.args.device), device_ids=[self.args.local_rank])
        return model

    def train(self):
        model = self._wrap_model(self.model)
        optimizer = torch.optim.AdamW(model.parameters(), lr=self.args.learning_rate)
        for epoch in range(int(self.args.num_train_epochs)):
            loader = self.get_train_dataloader()
            if hasattr(loader.sampler, "set_epoch"):
                loader.sampler.set_epoch(epoch)
            for batch in loader:
                loss = model(**batch).loss
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
