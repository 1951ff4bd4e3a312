from trainer import Trainer


class Seq2SeqTrainer(Trainer):
    def prediction_step(self, model, inputs):
        return model.generate(**inputs)
