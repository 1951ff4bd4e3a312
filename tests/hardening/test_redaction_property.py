"""Property: a secret planted in any spelling into logs, scripts, env or a saved report reaches no output.

Every renderer and the output writer run 200 generated examples; every command (logs, scan,
report in-process; ``--auto`` and ``probe`` as real processes) in every one of its output formats
runs fewer examples, each planting a batch of generated secrets at once (8 and 40).
"""

from __future__ import annotations

import functools
import json
import os
import string
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from troubleshooter.cli import main

ALNUM = string.ascii_letters + string.digits
NAMES = st.builds(lambda pre, word, post: pre + word + post,
                  st.sampled_from(["", "MY_", "DB_", "AWS_", "HF_", "OPENAI_", "WANDB_", "X1_"]),
                  st.sampled_from(["PASSWORD", "TOKEN", "SECRET", "API_KEY", "ACCESS_KEY", "PRIVATE_KEY", "PASSWD",
                                   "CREDENTIALS", "SECRET_ACCESS_KEY", "AUTH_KEY", "PASSPHRASE"]),
                  st.sampled_from(["", "_ID", "_PROD", "_2"]))
FLAGS = st.sampled_from(["password", "db-password", "token", "hf-token", "api-key", "secret", "access-key",
                         "wandb-api-key", "passwd"])
JSON_KEYS = st.sampled_from(["password", "token", "api_key", "secret", "apiKey", "client_secret", "auth_token"])
# a plain secret: a marker prefix (to find it) and 10+ random letters/digits
PLAIN = st.text(ALNUM, min_size=10, max_size=24).map(lambda s: "Zk9" + s)
SHAPED = st.one_of(
    st.text(ALNUM, min_size=34, max_size=34).map(lambda s: "hf_" + s),
    st.text(ALNUM, min_size=36, max_size=36).map(lambda s: "ghp_" + s),
    st.text(string.ascii_uppercase + string.digits, min_size=16, max_size=16).map(lambda s: "AKIA" + s),
    st.text(ALNUM, min_size=32, max_size=48).map(lambda s: "sk-" + s),
    st.text(ALNUM, min_size=24, max_size=24).map(lambda s: "xoxb-1234567890-" + s),
)
HEX40 = st.text("0123456789abcdef", min_size=40, max_size=40)


@st.composite
def planted(draw) -> tuple[str, str]:
    """(text carrying a secret, the secret) in one of the spellings logs, commands and configs use."""
    kind = draw(st.sampled_from(["assign", "colon", "spaced", "flag", "flag=", "json", "bearer", "url", "wandb",
                                 "shape", "quoted"]))
    name, value = draw(NAMES), draw(PLAIN)
    if kind == "shape":
        value = draw(SHAPED)
        return draw(st.sampled_from([value, f"token {value} used", f"export SOMETHING={value}"])), value
    if kind == "wandb":
        value = draw(HEX40)
        return f"wandb login {value}", value
    text = {
        "assign": f"{name}={value}", "colon": f"{name}: {value}", "spaced": f"{name} {value}",
        "quoted": f"{name}='{value}'", "flag": f"--{draw(FLAGS)} {value}", "flag=": f"--{draw(FLAGS)}={value}",
        "json": json.dumps({draw(JSON_KEYS): value}), "bearer": f"Authorization: Bearer {value}",
        "url": f"{draw(st.sampled_from(['postgres', 'https', 'redis', 'mysql+pymysql']))}://user:{value}@db.example:5432/x",
    }[kind]
    return text, value


def log_with(texts: list[str]) -> str:
    """A failing torchrun log whose root-cause traceback, error line and plain lines carry the texts."""
    lines = ["[rank0]: Traceback (most recent call last):",
             '[rank0]:   File "train.py", line 12, in <module>',
             f"[rank0]:     main({texts[0]!r})"]
    lines += [f"[rank0]: RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB {t}" for t in texts]
    lines += [f"launch: {t}" for t in texts]
    lines += [f"torch.distributed.DistNetworkError: failed to connect {t}" for t in texts]
    return "\n".join(lines) + "\n"


def script_with(texts: list[str]) -> str:
    """A buggy training script carrying the texts in literals and comments."""
    body = ["import torch", "import torch.distributed as dist", "from torch.utils.data import DataLoader",
            f"dist.init_process_group('nccl', init_method={texts[0]!r})"]
    body += [f"dl = DataLoader({t!r}, batch_size=8)  # {t}" for t in texts]
    body += ["if dist.get_rank() == 0:", "    dist.barrier()", "for x in dl:", f"    print(x, {texts[-1]!r})"]
    return "\n".join(body) + "\n"


def report_with(texts: list[str], names: list[str], values: list[str]) -> dict:
    """A saved report whose free-text fields and env mapping carry the secrets."""
    from tests.render.test_render import sample_doc

    doc = sample_doc()
    joined = " ".join(texts)
    doc["findings"][0]["evidence"].append({"source": "logs", "rank": 1, "detail": joined, "path": "x.log", "line": 3})
    doc["findings"][0]["why"] += " " + joined
    doc["probes"][0]["message"] = joined
    doc["facts"]["env"] = dict(zip(names, values))
    doc["facts"]["launch.command"] = joined
    doc["world"]["command"] = joined
    doc["run"] = {"command": texts, "root_failure": {"rank": 1, "traceback": "\n".join(texts)}}
    return doc


@pytest.fixture(scope="module")
def fast_commands():
    """Load the rules and templates once for the whole property run (what a fresh process does each time)."""
    from troubleshooter.cli import commands
    from troubleshooter.core import ruleset
    from troubleshooter.logs import analyzer
    from troubleshooter.report import render

    saved = ruleset.load_rules, commands.load_rules, render.environment, analyzer.compile_signatures
    cached_rules = functools.lru_cache(maxsize=None)(lambda dirs, base: saved[0](list(dirs), base=base))
    ruleset.load_rules = commands.load_rules = lambda dirs=(), base=None: cached_rules(tuple(dirs or ()), base)
    render.environment = functools.lru_cache(maxsize=None)(saved[2])
    compiled: dict[int, list] = {}

    def compile_once(raw):
        if id(raw) not in compiled:
            compiled[id(raw)] = saved[3](raw)
        return compiled[id(raw)]
    analyzer.compile_signatures = compile_once
    yield
    ruleset.load_rules, commands.load_rules, render.environment, analyzer.compile_signatures = saved


def assert_clean(outputs: dict[str, str], secrets: list[str]) -> None:
    for where, text in outputs.items():
        for secret in secrets:
            assert secret not in text, f"{secret!r} leaked into {where}"


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                  HealthCheck.too_slow])
@given(items=st.lists(planted(), min_size=1, max_size=3), names=st.lists(NAMES, min_size=1, max_size=3),
       env_values=st.lists(PLAIN, min_size=1, max_size=3))
def test_planted_secrets_reach_no_rendered_format(fast_commands, capsys, items, names, env_values) -> None:
    """200 examples through every renderer and the output writer (what every command ends with)."""
    from troubleshooter.cli.logs import render_text
    from troubleshooter.report.output import write_output
    from troubleshooter.report.render import render

    texts, secrets = [t for t, _ in items], [s for _, s in items]
    doc = report_with(texts, names, env_values)
    root = {"id": "out-of-memory", "rank": 1, "path": "x.log", "line": 3, "traceback": "\n".join(texts)}
    outputs = {fmt: render(doc, fmt) for fmt in ("md", "html", "json", "text")}
    for fmt in ("md", "html", "json", "text"):
        write_output(outputs[fmt], None)
    write_output(render_text(doc, {"log.lines": 3, "log.root_cause": root}, color=True), None)
    outputs["written to stdout"] = capsys.readouterr().out
    assert_clean(outputs, secrets + env_values)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                 HealthCheck.too_slow])
@given(items=st.lists(planted(), min_size=8, max_size=8), names=st.lists(NAMES, min_size=1, max_size=3),
       env_values=st.lists(PLAIN, min_size=1, max_size=3))
def test_planted_secrets_reach_no_command_output(fast_commands, capsys, items, names, env_values) -> None:
    """25 examples x 8 planted secrets through logs, scan and report in each of their formats."""
    texts, secrets = [t for t, _ in items], [s for _, s in items]
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        (d / "job.log").write_text(log_with(texts))
        (d / "train.py").write_text(script_with(texts))
        (d / "r.json").write_text(json.dumps(report_with(texts, names, env_values)))
        runs = [["logs", str(d / "job.log"), "--format", f] for f in ("text", "json")]
        runs += [["scan", str(d / "train.py"), "--format", f] for f in ("text", "json", "sarif")]
        runs += [["report", str(d / "r.json"), "--format", f] for f in ("md", "html", "json")]
        outputs = {}
        for i, argv in enumerate(runs):
            out = d / f"out{i}"
            assert main([*argv, "-o", str(out)]) in (0, 1), argv
            outputs[" ".join(argv[::2])] = out.read_text()
        assert main(["logs", str(d / "job.log")]) == 1
        captured = capsys.readouterr()
        outputs["logs to the terminal"] = captured.out + captured.err
    assert_clean(outputs, secrets + env_values)


def _run(argv: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "troubleshooter", *argv], env=env, cwd=cwd, capture_output=True,
                          text=True, timeout=120)


@pytest.mark.slow
@settings(max_examples=2, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(items=st.lists(planted(), min_size=40, max_size=40))
def test_planted_secrets_reach_no_output_of_auto_and_probe(tmp_path_factory, items) -> None:
    texts, secrets = [t for t, _ in items], [s for _, s in items]
    d = tmp_path_factory.mktemp("auto")
    (d / "job.log").write_text(log_with(texts))
    (d / "train.py").write_text(script_with(texts))
    env = {**os.environ, "CUDA_VISIBLE_DEVICES": " ".join(texts), "TROUBLESHOOTER_STATE_DIR": str(d)}
    auto = ["--auto", "--nproc", "2", "--probe", "launcher", "--probe", "hardware", "--log", str(d / "job.log"),
            "--script", str(d / "train.py"), "--no-color"]
    outputs = {}
    done = _run([*auto, "-o", str(d / "auto.json")], env, d)
    assert done.returncode in (0, 1), done.stderr
    outputs["--auto terminal"] = done.stdout + done.stderr
    outputs["--auto json"] = (d / "auto.json").read_text()
    for fmt in ("md", "html"):
        done = _run(["report", str(d / "auto.json"), "--format", fmt], env, d)
        outputs[f"--auto {fmt}"] = done.stdout + done.stderr
    for fmt in ("text", "json"):
        done = _run(["probe", "hardware", "--format", fmt], env, d)
        assert done.returncode in (0, 1), done.stderr
        outputs[f"probe {fmt}"] = done.stdout + done.stderr
    assert_clean(outputs, secrets)
