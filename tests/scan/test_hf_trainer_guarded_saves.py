"""collective-mismatch on HF Trainer calls under a main-process guard: ``trainer.save_state()`` only writes
``trainer_state.json`` from the main process (no collective, so a guard cannot hang it), while
``trainer.save_model()`` gathers a sharded engine's weights on every rank (transformers#31624: under DeepSpeed ZeRO-3
``if trainer.is_world_process_zero(): trainer.save_model()`` never returns) and ``trainer.evaluate()`` gathers the
predictions of every process."""

from __future__ import annotations

import pytest

from tests.scan.conftest import shows

SCRIPT = '''
import transformers


def main():
    parser = transformers.HfArgumentParser((transformers.TrainingArguments,))
    (training_args,) = parser.parse_args_into_dataclasses()
    model = transformers.AutoModelForCausalLM.from_pretrained("facebook/opt-125m")
    trainer = transformers.Trainer(model=model, args=training_args, train_dataset=None)
    trainer.train()
    {guard}
        trainer.{call}()


if __name__ == "__main__":
    main()
'''

GUARDS = ("if trainer.is_world_process_zero():", "if training_args.local_rank in (-1, 0):",
          "if training_args.process_index == 0:")


@pytest.mark.parametrize("guard", GUARDS)
@pytest.mark.parametrize("call, hangs", [("save_state", False), ("save_model", True), ("evaluate", True)])
def test_guarded_trainer_call(tmp_path, guard, call, hangs):
    assert shows(tmp_path, "collective-mismatch", SCRIPT.format(guard=guard, call=call)) is hangs
