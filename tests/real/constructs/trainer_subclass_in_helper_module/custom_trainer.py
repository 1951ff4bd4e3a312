from transformers import Trainer


class ProjectTrainer(Trainer):
    def create_optimizer(self):
        return super().create_optimizer()
