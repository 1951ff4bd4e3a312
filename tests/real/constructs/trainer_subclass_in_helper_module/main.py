# expect:
# seen-in: https://github.com/haotian-liu/LLaVA/blob/c121f0432da27facab705978f83c4ada465e46fd/llava/train/train.py
# The entry point builds a Trainer subclass defined in a local module and a TrainingArguments subclass handed to
# the argument parser: the HF Trainer runs the distributed work, so the file is distributed.
import torch.nn as nn
import transformers

from custom_trainer import ProjectTrainer


class TrainingArguments(transformers.TrainingArguments):
    freeze_backbone: bool = False


def train():
    parser = transformers.HfArgumentParser((TrainingArguments,))
    (training_args,) = parser.parse_args_into_dataclasses()
    model = nn.Linear(16, 2)
    trainer = ProjectTrainer(model=model, args=training_args)
    trainer.train()
    trainer.save_model(training_args.output_dir)


if __name__ == "__main__":
    train()
