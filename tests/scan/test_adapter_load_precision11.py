"""``PeftModel.from_pretrained(model, model_id)`` loads the adapter its second argument names: the first is the model
object. A local adapter path (``args.lora_path``, ``adapter_dir``) is no Hub download; a Hub id literal still is."""

from __future__ import annotations

import pytest

from tests.scan.conftest import shows

TEMPLATE = '''import argparse
import os
import torch
import torch.distributed as dist
{imports}
from transformers import AutoModelForCausalLM


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--lora_path", type=str)
    parser.add_argument("--adapter_dir", type=str)
    args = parser.parse_args()
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    model = AutoModelForCausalLM.from_pretrained("/models/base")
    model = {load}
    model.to(local_rank)
    with torch.no_grad():
        print(model(torch.ones(1, 8, dtype=torch.long, device=local_rank)).logits.shape)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
'''
CASES = {
    "class import, option path": ("from peft import PeftModel", "PeftModel.from_pretrained(model, args.lora_path)", False),
    "module import, keyword": ("import peft", "peft.PeftModel.from_pretrained(model, model_id=args.adapter_dir)", False),
    "a Hub adapter id": ("from peft import PeftModel", 'PeftModel.from_pretrained(model, "org/lora-adapter")', True),
}


@pytest.mark.parametrize("imports, load, warns", CASES.values(), ids=CASES.keys())
def test_the_adapter_argument_is_what_is_loaded(tmp_path, imports, load, warns):
    assert shows(tmp_path, "hf-cache-contention", TEMPLATE.format(imports=imports, load=load)) is warns
