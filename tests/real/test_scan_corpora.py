"""Structure of the real scanner corpora (manifest, buggy scripts, constructs) and their tools.

Accuracy thresholds are not asserted here: these tests check that every corpus item is well formed,
cites its source, names only ids the scanner knows, and that the cache filler and the bench work.
"""

from __future__ import annotations

import ast
import importlib.util
import re
import subprocess
from pathlib import Path

import pytest

from tests.real.split import split_of
from tests.scan.quality import (
    BUGGY, CONSTRUCTS, MANIFEST, buggy_files, construct_items, construct_main, expected_of, header,
    manifest_entries, repo_url,
)

from troubleshooter.scan import checker_ids

ROOT = Path(__file__).resolve().parents[2]
FRAMEWORKS = {"plain", "accelerate", "lightning", "hf-trainer", "deepspeed", "own-init"}
HEX40 = re.compile(r"^[0-9a-f]{40}$")
URL = re.compile(r"^https?://\S+$")
ENTRIES = manifest_entries()
BUGGY_FILES = buggy_files()
CONSTRUCT_ITEMS = construct_items()


def _load_bench(name: str):
    spec = importlib.util.spec_from_file_location(name, ROOT / "bench" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# --- manifest of real correct files -------------------------------------------------------

def test_manifest_has_enough_entries_across_frameworks_and_splits():
    assert len(ENTRIES) >= 40
    assert {e["framework"] for e in ENTRIES} == FRAMEWORKS
    assert {split_of(repo_url(e)) for e in ENTRIES} == {"dev", "test"}
    assert len({(e["repo"], e["path"]) for e in ENTRIES}) == len(ENTRIES), "duplicate manifest entry"


@pytest.mark.parametrize("entry", ENTRIES, ids=[f"{e['repo']}/{e['path']}" for e in ENTRIES])
def test_manifest_entry_is_pinned_and_complete(entry):
    assert re.fullmatch(r"[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+", entry["repo"])
    assert HEX40.match(entry["commit"]), entry["commit"]
    assert entry["url"] == f"https://github.com/{entry['repo']}/blob/{entry['commit']}/{entry['path']}"
    assert entry["path"].endswith(".py")
    assert entry["framework"] in FRAMEWORKS
    assert entry["expect"] == "clean"
    assert entry["distributed"] is True
    siblings = entry.get("with", [])
    assert isinstance(siblings, list) and all(isinstance(s, str) and s.endswith(".py") for s in siblings)
    assert entry["path"] not in siblings and len(set(siblings)) == len(siblings)


# --- buggy scripts rewritten from public bug reports ------------------------------------

def test_buggy_corpus_is_large_and_split():
    assert len(BUGGY_FILES) >= 40
    assert buggy_files("dev") and buggy_files("test")
    assert len(buggy_files("dev")) + len(buggy_files("test")) == len(BUGGY_FILES)
    assert all(p.suffix == ".py" or p.name.startswith("SOURCES-") and p.suffix == ".md"
               for p in BUGGY.iterdir() if p.name != "__pycache__")


@pytest.mark.parametrize("path", BUGGY_FILES, ids=[p.name for p in BUGGY_FILES])
def test_buggy_script_headers_and_ids(path):
    lines = path.read_text(encoding="utf-8").splitlines()
    assert [line.split(":")[0] for line in lines[:3]] == ["# expect", "# source", "# reason"], lines[:3]
    assert expected_of(path) <= set(checker_ids()), expected_of(path) - set(checker_ids())
    assert URL.match(header(path, "source") or ""), header(path, "source")
    assert len(header(path, "reason") or "") >= 20
    ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


def test_buggy_slugs_follow_the_source():
    for path in BUGGY_FILES:
        match = re.match(r"https://github\.com/([^/]+)/([^/]+)/(?:issues|pull)/(\d+)", header(path, "source"))
        if match:
            slug = "-".join(match.groups())
            assert re.fullmatch(re.escape(slug) + r"(-\d+)?", path.stem), (path.name, slug)


# --- constructs ----------------------------------------------------------------------------

def test_constructs_cover_the_real_idioms():
    assert len(CONSTRUCT_ITEMS) >= 10
    assert any(item.is_dir() for item in CONSTRUCT_ITEMS), "a multi-file construct (directory) is expected"


@pytest.mark.parametrize("item", CONSTRUCT_ITEMS, ids=[p.name for p in CONSTRUCT_ITEMS])
def test_construct_headers_point_at_a_manifest_file(item):
    main = construct_main(item)
    assert expected_of(main) == set()
    seen_in = header(main, "seen-in")
    assert seen_in in {e["url"] for e in ENTRIES}, seen_in
    for path in [main] if item.is_file() else sorted(item.glob("*.py")):
        ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


# --- tools ---------------------------------------------------------------------------------

def _git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(cwd), *args], check=True, capture_output=True, text=True,
                          env={"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.org",
                               "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.org",
                               "PATH": "/usr/bin:/bin"}).stdout.strip()


def test_fill_real_cache_copies_pinned_files_from_a_mirror_and_reports_the_rest(tmp_path):
    fill_real_cache = _load_bench("fill_real_cache")
    work = tmp_path / "mirrors" / "someone+proj" / "repo"
    (work / "pkg").mkdir(parents=True)
    _git(work, "init", "-q")
    (work / "train.py").write_text("import pkg.util\n")
    (work / "pkg" / "util.py").write_text("X = 1\n")
    _git(work, "add", "-A")
    _git(work, "commit", "-qm", "pinned")
    commit = _git(work, "rev-parse", "HEAD")
    (work / "train.py").write_text("changed after the pin\n")
    _git(work, "commit", "-qam", "later")
    entries = [{"repo": "someone/proj", "path": "train.py", "commit": commit, "with": ["pkg/util.py", "gone.py"]},
               {"repo": "nobody/none", "path": "x.py", "commit": "0" * 40}]
    cache = tmp_path / "cache"
    missing = fill_real_cache.fill(entries, tmp_path / "mirrors", offline=True, root=cache)
    base = cache / "someone+proj" / commit
    assert (base / "train.py").read_text() == "import pkg.util\n"
    assert (base / "pkg" / "util.py").read_text() == "X = 1\n"
    assert len(missing) == 2 and "gone.py" in missing[0] and "nobody/none" in missing[1]


def test_bench_says_when_the_cache_is_absent(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("DDP_TS_REAL_CACHE", str(tmp_path / "absent"))
    _load_bench("scan_quality").real_section("dev")
    assert "cache absent: run python bench/fill_real_cache.py" in capsys.readouterr().out


def test_manifest_file_is_the_one_the_tools_read():
    assert MANIFEST == _load_bench("fill_real_cache").MANIFEST
    assert CONSTRUCTS.is_dir() and BUGGY.is_dir()


# --- ratchets: figures may only improve (dev split; test is measured, never tuned on) ----------

# Lowered by the scan-blind6 blind batch (9 fresh reports, labelled before any scan; its dev misses are the
# measurement, see tests/real/buggy/SOURCES-scan-blind6.md): measured 0.978 / 0.910 at first look; recall back to
# 0.91 once landed on main 8c0e7fd (0.978 / 0.917 after the collective-mismatch shape-bound change), rounded down.
# Lowered again by scan-recall7a's round-s9 first look (7 fresh dev reports labelled before any scan, 3 found;
# tests/real/buggy/SOURCES-scan-recall7a.md): dev 171 expected, TP 153 FN 18 = 0.895 at first look.
# Precision lowered to 0.96 by scan-recall7b's session-9 first-look batch (11 fresh reports, labelled before any
# scan, tests/real/buggy/SOURCES-scan-recall7b.md round s9): two false alarms of other checkers on them
# (ddp-before-to-device after convert_sync_batchnorm, batchnorm-not-synced on ultralytics' trainer) are the
# measurement.
# Recall back to 0.91 with scan-recall7a's torch_xla and endless-generator set_epoch families (pytorch/xla#997,
# #7904, goodfire-ai/spd#104 found): dev TP 162 FP 5 FN 16 = 0.970 / 0.910 on main 9c9dce2 + those.
# Recall lowered to 0.90 by the blind9 batch's first look (4 fresh dev reports labelled before any scan, 2 found;
# tests/real/buggy/SOURCES-blind9.md): dev TP 165 FP 5 FN 17 = 0.971 / 0.907 on main 148bfa7 + the batch.
# Recall lowered to 0.89 by the blind10 batch's first look (7 fresh dev reports labelled before any scan, 4 found;
# tests/real/buggy/SOURCES-blind10.md): dev TP 169 FP 6 FN 20 = 0.966 / 0.894 on main 2d36074 + the batch.
# Recall back to 0.90 with scan-recall8's rank-0 DDP forward through helpers and sharded-engine save_state families
# (velog scyonggg, SimpleTuner#262 found): dev TP 171 FP 6 FN 18 = 0.966 / 0.905.
# Recall 0.92 with scan-recall8's documented global batch, micro-batch loop without no_sync and URL-download
# families (lightly-train#194, open_lm#60, composer#209 found): dev TP 174 FP 6 FN 15 = 0.967 / 0.921.
# Recall lowered to 0.91 by the blind11 batch's first look (3 fresh dev reports labelled before any scan, 2 found;
# tests/real/buggy/SOURCES-blind11.md): dev TP 176 FP 6 FN 16 = 0.967 / 0.917 on main 3276d6b + the batch.
# Recall lowered to 0.89 by the harvest11 batch's first look (6 fresh dev reports labelled before any scan, 3 of 7
# labels found; tests/real/buggy/SOURCES-harvest11.md): dev TP 179 FP 6 FN 20 = 0.968 / 0.8995 on main ff084e0 + the batch, rounded down.
# Recall back to 0.91 with scan-recall11's nanoGPT sync-flag, Lightning Fabric accumulation and constructor-parameter
# families (build-nanogpt#30, alphafold3-pytorch#23, VariantWorks#126 found): dev TP 182 FP 6 FN 17 = 0.968 / 0.915.
# Recall lowered to 0.89 by the blind12 batch's first look (7 fresh dev reports labelled before any scan, 2 found;
# tests/real/buggy/SOURCES-blind12.md): dev TP 185 FP 6 FN 21 = 0.969 / 0.898 on main debad87 + the batch, rounded down.
# Precision raised to 0.97 by scan-precision12's batchnorm evidence (the per-rank batch read through option and config
# defaults): dev TP 184 FP 4 FN 22 = 0.979 / 0.893 (OpenOOD-186's 128 per GPU lost, two false alarms gone).
# scan-recall12's exit nested in a rank arm (VLMEvalKit#726 found): dev TP 185 FP 4 FN 21 = 0.979 / 0.898 (floors hold).
# Recall 0.90 with scan-recall12's accumulation counted on an object through methods (ClassyVision#656 found): dev TP
# 186 FP 4 FN 20 = 0.979 / 0.903.
# scan-recall12's per-step collective over hand-split data without DDP (dlio_benchmark#339 found): dev TP 187 FP 4
# FN 19 = 0.979 / 0.908.
# Recall lowered to 0.89 by the blind13 batch's first look (5 fresh dev reports labelled before any scan, 2 found;
# tests/real/buggy/SOURCES-blind13.md): dev TP 189 FP 5 FN 22 = 0.974 / 0.896 on main 46af255 + the batch, rounded down.
DEV_FLOORS = {"precision": 0.97, "recall": 0.89}
# Correct-file warnings judged right (docs/SCANNER.md, 'Precision standard'), one by one (a new warning in the same
# file still fails):
ACCEPTED_REAL_WARNINGS = {
    # accelerator.save_state under `if accelerator.is_main_process:` in a script that handles DeepSpeed (its
    # deepspeed_plugin / ZeRO-3 set-up): with DeepSpeed every process must save its shard, so the main process hangs
    # - diffusers#2606 (this family of scripts), SimpleTuner#262 (fixed) and accelerate#1171; diffusers' later
    # scripts guard the same save with `distributed_type == DistributedType.DEEPSPEED or is_main_process`.
    "huggingface/diffusers/examples/text_to_image/train_text_to_image.py": {
        "collective-mismatch examples/text_to_image/train_text_to_image.py:1089"},
    # yolov7 accumulates max(round(64 / batch), 1) steps without no_sync (yolov5 maintainers accepted no_sync for
    # the same code, ultralytics/yolov5#790), and saves init.pt on every rank where every other save in the file
    # is guarded by `if rank in [-1, 0]`.
    "WongKinYiu/yolov7/train.py": {"grad-accum-without-no-sync train.py:372", "logging-from-all-ranks train.py:306"},
    "WongKinYiu/yolov7/train_aux.py": {"grad-accum-without-no-sync train_aux.py:369",
                                       "logging-from-all-ranks train_aux.py:306"},
    # NCCL without set_device or a per-rank CUDA_VISIBLE_DEVICES, devices picked per tensor and a dist.barrier():
    # the construct of four confirmed reports in the buggy corpus (deepmd, pi-GAN, returnn, transformers#4657);
    # the same authors' later guided-diffusion dist_util adds CUDA_VISIBLE_DEVICES = rank % GPUS_PER_NODE.
    "openai/improved-diffusion/scripts/image_train.py": {"missing-set-device improved_diffusion/dist_util.py:41"},
    # from_pretrained on every rank of a raw torch.distributed (FSDP) run, one warning for the file's six loads:
    # the construct maintainers confirmed as a bug in llm-compressor#2984 and llm-foundry#1390 (buggy corpus).
    "meta-llama/llama-recipes/src/llama_cookbook/finetuning.py": {
        "hf-cache-contention src/llama_cookbook/finetuning.py:140"},
    # An experiment tracker started on every rank (N runs where one is meant): the construct maintainers fixed in
    # metatrain#733, PufferDrive#468 and bionemo-recipes#1232 (buggy corpus). (The timm copies' `--log-wandb` starts -
    # poolformer, fastvit, MambaVision, FasterViT - and lucidrains' `mode='disabled'` unless switched on are advice
    # since scan-precision11: off by default, the default run starts no tracker.)
    "Vision-CAIR/MiniGPT-4/train.py": {"logging-from-all-ranks train.py:94"},
    # dlrm shards its embedding tables across ranks, yet every rank torch.saves its own model to the one
    # args.save_model file (last writer wins, partial tables), and every rank writes its loss curves into the same
    # TensorBoard directory (read as one run: the ranks' points interleave).
    "facebookresearch/dlrm/dlrm_s_pytorch.py": {"logging-from-all-ranks dlrm_s_pytorch.py:1510",
                                                "logging-from-all-ranks dlrm_s_pytorch.py:1715"},
    # (OLMo's module-trace debug hook, once accepted here, is defined after `if micro_batch_idx != 0 or
    # get_global_rank() != 0: return []`: the closure exists on rank 0 only. Quiet since scan-precision11.)
    # VILA's Trainer.save_model override torch.saves non_lora_trainables.bin on every rank; the LLaVA code it
    # derives from guards the same save with `if local_rank in (0, -1)`.
    "NVlabs/VILA/llava/train/train.py": {"logging-from-all-ranks llava/train/llava_trainer.py:819"},
    # x-transformers accumulates 4 micro-batches per step with accelerator.backward in an inner loop, without
    # accumulate()/no_sync, under an Accelerator that wraps the model in DDP: 4 gradient all-reduces per step where one
    # is needed - the construct of open_lm#60 (merged no_sync fix) and accelerate#106 (buggy corpus).
    "lucidrains/x-transformers/train_enwik8.py": {"grad-accum-without-no-sync train_enwik8.py:126"},
    # DeeBERT's 2019 copy of HF's run_glue: the DistributedSampler is never re-seeded (the same order every epoch;
    # torch's DistributedSampler docs require set_epoch). (Its accumulation without no_sync, the transformers#7742
    # construct, is quiet since the accumulation option defaults to 1.)
    "castorini/DeeBERT/examples/run_highway_glue.py": {"missing-set-epoch examples/run_highway_glue.py:105"},
    # A vendored copy of HF's summarization example from before main_process_first: every rank maps the train, eval
    # and test splits into the same datasets cache at once, the construct the maintainers fixed in transformers#12345
    # (one warning for the three maps: one cause, one fix).
    "jxhe/unify-parameter-efficient-tuning/examples/pytorch/summarization/run_summarization.py": {
        "hf-cache-contention examples/pytorch/summarization/run_summarization.py:475"},
    # HF Trainer scripts mapping their datasets on every rank with no main_process_first: every process writes the
    # same datasets cache files at once, the construct maintainers fixed in transformers#12345, trl#1255, trl#1926 and
    # trl#3106 (SimPO's run_simpo.py descends from alignment-handbook's run_dpo.py).
    "artidoro/qlora/qlora.py": {"hf-cache-contention qlora.py:607"},
    "princeton-nlp/SimPO/scripts/run_simpo.py": {"hf-cache-contention scripts/run_simpo.py:183"},
    # blind11 first look (tests/real/buggy/SOURCES-blind11.md), judged right: ChatGLM3's finetune_hf.py, run with
    # `torchrun --nproc_per_node=8` per its README, loads and maps its dataset (`Dataset.map(num_proc=...)`) on
    # every rank with no main_process_first, the same HF Trainer construct as qlora's and SimPO's above.
    "THUDM/ChatGLM3/finetune_demo/finetune_hf.py": {"hf-cache-contention finetune_demo/finetune_hf.py:261"},
    # stylegan2-pytorch's run_training ends with `model.save(...)` on every rank (its in-loop saves sit under
    # `if self.is_main:`): every process torch.saves the same checkpoint file at once; and its DistributedSampler is
    # read through `cycle(loader)` with no set_epoch (the same order every pass, the DeeBERT construct above).
    # Re-judged right by scan-precision8 (listed as a false alarm since session 6): its tensors go to `.cuda(rank)` but
    # nothing sets the device, and its loader pins memory (pin_memory=True, num_workers=0 under DDP): pinning in the
    # process allocates through the current device, GPU 0, so every rank opens a CUDA context there - hifi-gan's
    # construct below.
    "lucidrains/stylegan2-pytorch/stylegan2_pytorch/cli.py": {
        "logging-from-all-ranks stylegan2_pytorch/stylegan2_pytorch.py:1379",
        "missing-set-device stylegan2_pytorch/cli.py:39",
        "missing-set-epoch stylegan2_pytorch/stylegan2_pytorch.py:950"},
    # A resume checkpoint written by one rank and torch.load-ed with no map_location on every rank: each rank
    # restores the whole checkpoint onto the saving rank's GPU (the tensors keep their saved device) - the memory
    # spike on GPU 0 the DDP tutorial's map_location advice exists for.
    "zhanghang1989/ResNeSt/scripts/torch/train.py": {"hardcoded-cuda0 scripts/torch/train.py:178"},
    "huggingface/picotron/train.py": {"hardcoded-cuda0 picotron/checkpoint.py:280"},
    # BELLE's copy of DeepSpeed-Chat step 1 loads the tokenizer from the Hub on every rank right after joining the
    # group (llm-foundry#1390's construct; llm-compressor#2984 reports the race on huggingface_hub 1.25 with the
    # files already cached), and its DistributedSampler is never given set_epoch (the DeeBERT construct above).
    "LianjiaTech/BELLE/train/dschat_train_v1/main.py": {"hf-cache-contention train/dschat_train_v1/main.py:219",
                                                        "missing-set-epoch train/dschat_train_v1/main.py:267"},
    # SiT's every-rank VAE from_pretrained right after joining the group, re-judged by scan-precision7: the Hub
    # client's per-file locks do not make it safe - llm-compressor#2984 (a maintainer's report, 2026, hf-hub 1.25 and
    # hf-xet, model already in the cache) fails in cached_files when every DDP rank loads at once; the fix under
    # review fills the cache on rank 0 behind a barrier. The construct is a defect on current clients too.
    "willisma/SiT/train.py": {"hf-cache-contention train.py:177"},
    # Second first look of scan-precision7, judged right: tacotron2's DistributedSampler is never given set_epoch
    # (the same shuffle every epoch, the DeeBERT construct above).
    "NVIDIA/tacotron2/train.py": {"missing-set-epoch train.py:49"},
    # hifi-gan places its models and batches on `cuda:{rank}` and wraps with device_ids=[rank], but never sets the
    # device while its loaders use pin_memory=True on every rank: the DataLoader's pin-memory thread binds to the
    # current device, GPU 0, so each process opens a CUDA context there (N contexts on GPU 0, the extra memory the
    # finding names). Judged right on that ground (a first reading called it wrong).
    "jik876/hifi-gan/train.py": {"missing-set-device train.py:26"},
    # Session 9 first look of scan-precision7, judged right. UniMatch resumes from latest.pth (saved by rank 0 only)
    # with torch.load and no map_location on every rank: each rank restores it onto GPU 0 (the ResNeSt construct
    # above); supervised.py's own resume is scanned with unimatch.py, which imports its evaluate().
    "LiheYoung/UniMatch/unimatch.py": {"hardcoded-cuda0 supervised.py:146", "hardcoded-cuda0 unimatch.py:98"},
    "LiheYoung/UniMatch/supervised.py": {"hardcoded-cuda0 supervised.py:146"},
    # Large-DiT's every-rank AutoencoderKL.from_pretrained right after joining the group: SiT's construct above.
    "Alpha-VLLM/LLaMA2-Accessory/Large-DiT-ImageNet/train.py": {"hf-cache-contention Large-DiT-ImageNet/train.py:314"},
    # Second first look of session 9, judged right: glue-factory all-reduces a do_backward flag so the ranks agree
    # on skipping a step, but a NaN loss `continue`s before that all-reduce on the rank that saw it: the other ranks
    # wait in the all-reduce (then the backward) for it - a hang on the first NaN batch of one rank.
    "cvg/glue-factory/gluefactory/train.py": {"collective-mismatch gluefactory/train.py:480"},
    # blind12 first look (tests/real/buggy/SOURCES-blind12.md), judged right: minimind's pretraining accumulates
    # --accumulation_steps (default 8) micro-batches with scaler.scale(loss).backward() through the DDP model and no
    # no_sync(), so gradients are all-reduced on every micro-step (the same construct yolov5 accepted, #790).
    "jingyaogong/minimind/trainer/train_pretrain.py": {"grad-accum-without-no-sync trainer/train_pretrain.py:40"},
    # blind13 first look (tests/real/buggy/SOURCES-blind13.md), judged right: asteroid's ConvTasNet recipe runs
    # Lightning with strategy="ddp", so every process continues after trainer.fit() and torch.save()s the same
    # best_model.pth (and dumps the same best_k_models.json) at once - the concurrent write of one file that
    # kakaobrain/scrl#5 and bytedance/ibot#15 fixed by saving on the main process only.
    "asteroid-team/asteroid/egs/librimix/ConvTasNet/train.py": {
        "logging-from-all-ranks egs/librimix/ConvTasNet/train.py:120"},
}
# Correct-file warnings judged WRONG and not fixed yet (counted by bench/scan_quality.py all the same; listed so the
# ratchet still fails on any other). (SiT's every-rank Hub load, once listed here, is accepted above; VQ-Diffusion's
# per-optimizer skip, fixed by scan-recall7b: a loop over a mapping's entries holds no batch data.)
# (stylegan3's and edm2's training_stats._sync, an early return when no counter name matches, is advice since
# scan-precision11: the names come from a module-level registry every rank fills alike.) (efficientvit's
# set-up and dist_barrier() behind its package's re-exporting __init__.py are resolved since scan-precision6.)
KNOWN_FALSE_ALARMS = {
    # blind11 first look (tests/real/buggy/SOURCES-blind11.md), judged wrong: 1d-tokenizer's un-sharded
    # pretokenized-JSONL DataLoader sits in an else arm no shipped config reaches (the `pretokenization` configs all
    # take the two branches above it), so the file as used is correct. (minRF's DataLoader over a mosaicml
    # StreamingDataset, which partitions its samples by rank itself, is fixed by scan-precision11: library datasets
    # that shard by rank, rules/scan/frameworks.yaml rank_sharding_datasets.)
    "bytedance/1d-tokenizer/scripts/train_titok.py": {"missing-distributed-sampler utils/train_utils.py:343"},
    # blind12 first look (tests/real/buggy/SOURCES-blind12.md), judged wrong: minimind's lm_checkpoint() writes with
    # torch.save, but its only saving call site (train_pretrain.py:69) sits under `... and is_main_process():` - a
    # guard at the caller; SLIP loads its auto-resume checkpoint into the DDP-wrapped model, and that checkpoint was
    # saved from the same wrapper (`'state_dict': model.state_dict()`, main.py:246), so the keys match.
    "jingyaogong/minimind/trainer/train_pretrain.py": {"logging-from-all-ranks trainer/trainer_utils.py:75",
                                                       "logging-from-all-ranks trainer/trainer_utils.py:103"},
    "facebookresearch/SLIP/main.py": {"checkpoint-without-module main.py:153"},
    # blind13 first look (tests/real/buggy/SOURCES-blind13.md), judged wrong: ml-cvnets builds DataParallel only
    # in the arm of an opt-in, deprecated debugging option (ddp.use_deprecated_data_parallel, with a warning)
    # whose elif wraps the model in DDP; the two arms exclude each other, so a DDP run never uses DataParallel.
    "apple/ml-cvnets/main_train.py": {"dataparallel main_train.py:88"},
    # (First look of scan-precision6 (session 6), judged wrong and fixed since: SparK's one-process arm, `'RANK' not
    # in os.environ`, by scan-precision7; nanoVLM's rows cut with `.shard(num_shards=world_size, index=rank)` before
    # two dataset wrappers, by scan-precision8. stylegan2-pytorch's missing set_device, re-judged right by
    # scan-precision8 on hifi-gan's ground: see ACCEPTED_REAL_WARNINGS. Latte's accumulation count, 1 in every
    # OmegaConf config it ships, is advice since scan-precision7's evidence bar.)
    # (Session 9 first look of scan-precision7, judged wrong and fixed since: XMem's trainer gets its logger and save
    # path only on rank 0 and saves only when they are set, a value that exists on rank 0 only (scan-precision8);
    # UniMatch's validation loader handed to evaluate() under no_grad; torchdistill's per-sample teacher cache, one
    # file per unpacked loop item; DPR's accumulation count, 1 in every Hydra config it ships,
    # below the evidence bar.)
    # (glue-factory's ddp-before-to-device, a model built moved and converted with convert_sync_batchnorm before the
    # wrap, is fixed: a conversion keeps the device of the module it is handed.)
}


def test_dev_buggy_scripts_meet_the_floors():
    from tests.scan.quality import measure, totals
    figures = totals(measure(buggy_files("dev"), shown=True, truth_of=expected_of))
    assert figures["precision"] >= DEV_FLOORS["precision"], figures
    assert figures["recall"] >= DEV_FLOORS["recall"], figures


@pytest.mark.parametrize("item", CONSTRUCT_ITEMS, ids=[p.name for p in CONSTRUCT_ITEMS])
def test_construct_is_clean_and_seen_as_distributed(item):
    from tests.scan.quality import shown_findings
    hits, facts = shown_findings([str(item)])
    assert hits == {}, hits
    assert facts["scan.uses_distributed"] is True


def test_real_correct_files_dev_have_no_warnings_and_are_distributed():
    cache = _load_bench("scan_quality").cache_root()
    if not cache.is_dir():
        pytest.skip(f"real-script cache absent ({cache}): run python bench/fill_real_cache.py")
    from tests.scan.quality import scan_real
    outcomes = [scan_real(e, cache) for e in manifest_entries("dev")]
    if any(o.missing for o in outcomes):
        pytest.skip("real-script cache incomplete: run python bench/fill_real_cache.py")
    warned = {}
    for o in outcomes:
        name = f"{o.entry['repo']}/{o.entry['path']}"
        unexpected = set(o.warnings) - ACCEPTED_REAL_WARNINGS.get(name, set()) - KNOWN_FALSE_ALARMS.get(name, set())
        if unexpected:
            warned[name] = sorted(unexpected)
    assert warned == {}
    assert [o.entry["path"] for o in outcomes if not o.distributed] == []
