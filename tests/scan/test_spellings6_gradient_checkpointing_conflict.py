"""gradient-checkpointing-conflict through Hugging Face's older switches: ``config.gradient_checkpointing = True``,
``from_pretrained(..., gradient_checkpointing=True)``, ``TrainingArguments(gradient_checkpointing=True,
ddp_find_unused_parameters=True)``, besides ``gradient_checkpointing_enable()``; near misses that must stay quiet:
find_unused_parameters=False, the flag set False, set only on request, use_reentrant=False in the kwargs."""

from __future__ import annotations

import pytest

from tests.scan.conftest import scan_ids

ID = "gradient-checkpointing-conflict"

SCRIPT = '''
import os
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel
from transformers import BertConfig, BertForPreTraining


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
__BUILD__
    model = DistributedDataParallel(model.cuda(local_rank), device_ids=[local_rank], find_unused_parameters=__FU__)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    for _ in range(10):
        loss = model(input_ids=torch.randint(0, 100, (2, 16)).cuda()).loss
        loss.backward()
        opt.step()
        opt.zero_grad()
    dist.destroy_process_group()


main()
'''

CONFIG_ATTR = ("    config = BertConfig.from_pretrained('bert-base-uncased')\n    config.gradient_checkpointing = {value}\n"
               "    model = BertForPreTraining.from_pretrained('bert-base-uncased', config=config)\n")
KEYWORD = "    model = BertForPreTraining.from_pretrained('bert-base-uncased', gradient_checkpointing=True)\n"
ENABLE = "    model = BertForPreTraining.from_pretrained('bert-base-uncased')\n    model.gradient_checkpointing_enable()\n"
ON_REQUEST = ("    config = BertConfig.from_pretrained('bert-base-uncased')\n    if os.environ.get('GC'):\n"
              "        config.gradient_checkpointing = True\n"
              "    model = BertForPreTraining.from_pretrained('bert-base-uncased', config=config)\n")

TRAINER = '''
from transformers import AutoModelForCausalLM, Trainer, TrainingArguments

model = AutoModelForCausalLM.from_pretrained("gpt2")
args = TrainingArguments(output_dir="out", gradient_checkpointing=True, ddp_find_unused_parameters=True{extra})
Trainer(model=model, args=args, train_dataset=None).train()
'''


def script(build: str, find_unused: str = "True") -> str:
    return SCRIPT.replace("__BUILD__\n", build).replace("__FU__", find_unused)


@pytest.mark.parametrize("code", [
    script(CONFIG_ATTR.format(value="True")), script(KEYWORD), script(ENABLE), TRAINER.format(extra=""),
], ids=["config-attribute", "from-pretrained-keyword", "enable-method", "training-arguments"])
def test_reentrant_hf_checkpointing_with_find_unused(tmp_path, code):
    assert ID in scan_ids(tmp_path, code)


@pytest.mark.parametrize("code", [
    script(CONFIG_ATTR.format(value="True"), find_unused="False"),
    script(CONFIG_ATTR.format(value="False")),
    script(ON_REQUEST),
    TRAINER.format(extra=", gradient_checkpointing_kwargs={'use_reentrant': False}"),
], ids=["find-unused-false", "flag-false", "on-request", "non-reentrant-kwargs"])
def test_quiet_without_the_conflict(tmp_path, code):
    assert ID not in scan_ids(tmp_path, code)
