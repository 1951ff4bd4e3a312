"""hf-cache-contention's evidence bar (issue 11, scan-precision4): a Hub load is a warning where the code shows
every rank running it at start-up — in the module that starts the process (its ``__main__`` block, or a top-level
call of its own ``main``), at module level, or in a snippet with no entry at all. Inside a function of a library
module (a model's ``__init__``, a tokenizer or dataset builder, a plugin) it runs wherever its callers run it,
maybe after rank 0 filled the cache: ``info`` (listed, not a warning). About 70 of the 188 warnings a directory scan
of the dev repositories raised were of this kind (mmf, LAVIS, mmpretrain models, axolotl plugins, tests)."""

from __future__ import annotations

from pathlib import Path

from tests.scan.quality import shown_findings
from troubleshooter.scan import scan_paths

ENTRY = '''
import os
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
{imports}


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    dist.init_process_group("nccl")
    torch.cuda.set_device(local_rank)
{body}
    model = DDP(model.cuda(), device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters())
    for step in range(10):
        loss = model(torch.randint(0, 100, (2, 16)).cuda()).logits.sum()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


{start}
'''

LIBRARY_SPELLINGS = {
    "model_init.py": '''
import torch.nn as nn
from transformers import AutoModel, AutoTokenizer


class Captioner(nn.Module):
    def __init__(self, name="bert-base-uncased"):
        super().__init__()
        self.tokenizer = AutoTokenizer.from_pretrained(name)
        self.encoder = AutoModel.from_pretrained(name)

    def forward(self, ids):
        return self.encoder(ids)
''',
    "builders.py": '''
from datasets import load_dataset
from transformers import BertConfig


def build_dataset(name):
    return load_dataset(name, split="train")


def build_config():
    return BertConfig.from_pretrained("bert-base-uncased")
''',
}
USES = {"model_init.py": ("from model_init import Captioner", "    model = Captioner()"),
        "builders.py": ("from builders import build_config\nfrom transformers import AutoModelForMaskedLM",
                        "    model = AutoModelForMaskedLM.from_config(build_config())")}
STARTS = ('if __name__ == "__main__":\n    main()', "main()")


def _write(tmp_path: Path, files: dict[str, str]) -> Path:
    for name, code in files.items():
        (tmp_path / name).write_text(code, encoding="utf-8")
    return tmp_path


def _hub_hits(paths: list[str]) -> tuple[list, list]:
    """(shown hits, all hits) of hf-cache-contention."""
    shown, _ = shown_findings(paths)
    return shown.get("hf-cache-contention", []), scan_paths(paths).hits.get("hf-cache-contention", [])


def test_a_load_inside_a_library_function_is_info(tmp_path):
    for library, code in LIBRARY_SPELLINGS.items():
        for start in STARTS:
            imports, body = USES[library]
            folder = tmp_path / f"{library[:-3]}{len(start)}"
            folder.mkdir()
            _write(folder, {library: code, "train.py": ENTRY.format(imports=imports, body=body, start=start)})
            shown, every = _hub_hits([str(folder)])
            assert shown == [], (library, start, shown)
            assert every and all(h.get("severity") == "info" for h in every), (library, every)


def test_a_load_in_the_entry_or_at_module_level_still_warns(tmp_path):
    cases = [
        # in the entry's own main, every rank, right after init (llm-compressor#2984, llm-foundry#1390)
        {"train.py": ENTRY.format(imports="from transformers import AutoModelForCausalLM",
                                  body='    model = AutoModelForCausalLM.from_pretrained("gpt2")', start=STARTS[0])},
        {"train.py": ENTRY.format(imports="from transformers import AutoModelForCausalLM",
                                  body='    model = AutoModelForCausalLM.from_pretrained("gpt2")', start=STARTS[1])},
        # a library module loading at import time: runs on every rank whoever imports it
        {"tokens.py": 'from transformers import AutoTokenizer\nTOKENIZER = AutoTokenizer.from_pretrained("gpt2")\n',
         "train.py": ENTRY.format(imports="import tokens\nfrom transformers import AutoModelForCausalLM",
                                  body='    model = AutoModelForCausalLM.from_config(tokens.TOKENIZER)',
                                  start=STARTS[0])},
    ]
    for number, files in enumerate(cases):
        folder = tmp_path / f"case{number}"
        folder.mkdir()
        _write(folder, files)
        shown, _ = _hub_hits([str(folder)])
        assert len(shown) == 1, (number, shown)


def test_a_snippet_without_any_entry_keeps_the_warning(tmp_path):
    code = ENTRY.format(imports="from transformers import AutoModelForCausalLM",
                        body='    model = AutoModelForCausalLM.from_pretrained("gpt2")', start="")
    path = tmp_path / "snippet.py"
    path.write_text(code, encoding="utf-8")
    shown, _ = _hub_hits([str(path)])
    assert len(shown) == 1, shown


def test_a_dataset_read_from_the_users_own_files_is_no_hub_download(tmp_path):
    """``load_dataset("json", data_files=path)`` (ChatGLM's ptuning, HF example scripts with --train_file): a
    packaged builder over local files; a Hub dataset name still warns."""
    for call in ('load_dataset("json", data_files=args.train_file)',
                 'load_dataset(extension, data_files={"train": args.train_file}, cache_dir=args.cache_dir)'):
        body = f'    args = parse()\n    extension = "csv"\n    data = {call}\n    model = build(data)'
        code = ENTRY.format(imports="from datasets import load_dataset\nfrom helpers import parse, build",
                            body=body, start=STARTS[0])
        path = tmp_path / "train.py"
        path.write_text(code, encoding="utf-8")
        assert _hub_hits([str(path)])[0] == [], call
    body = '    data = load_dataset("imdb", split="train")\n    model = build(data)'
    path.write_text(ENTRY.format(imports="from datasets import load_dataset\nfrom helpers import build", body=body,
                                 start=STARTS[0]), encoding="utf-8")
    assert len(_hub_hits([str(path)])[0]) == 1
