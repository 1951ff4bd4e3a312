# expect: collective-mismatch
# source: https://github.com/huggingface/accelerate/issues/2733
# reason: Multi-GPU inference hung at gather_object: it was called inside "if distributed_state.is_main_process:", so only the main process entered the gather; the maintainer explained gather_object must be called on every worker.
import torch
from accelerate import Accelerator
from accelerate.utils import gather_object
from transformers import AutoModelForCausalLM, AutoTokenizer


def grade(inputs):
    distributed_state = Accelerator()
    model_path = "mistralai/Mistral-7B-Instruct-v0.2"
    with distributed_state.main_process_first():
        tokenizer = AutoTokenizer.from_pretrained(model_path)
        model = AutoModelForCausalLM.from_pretrained(model_path, torch_dtype=torch.bfloat16)
    model.to(distributed_state.device)
    txt_out = []
    with distributed_state.split_between_processes(inputs) as prompts:
        for prompt in prompts:
            ids = tokenizer(prompt, return_tensors="pt").to(distributed_state.device)
            out = model.generate(**ids, max_new_tokens=64)
            txt_out.append(tokenizer.decode(out[0], skip_special_tokens=True))
    if distributed_state.is_main_process:
        results = gather_object(txt_out)
        print(results[0])
        print(results[1])
        return results
    return None


if __name__ == "__main__":
    grade([f"Grade answer {i}" for i in range(64)])
