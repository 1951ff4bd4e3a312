"""Meaning-preserving re-framings of a log: the same run as another launcher, terminal or forum shows it.

A real log reaches the analyzer through framings that say nothing about the failure: each launcher's
per-rank label, a logger's or a log collector's timestamp, terminal colours, Windows line ends, a
terminal or a forum wrapping long lines, ranks printing over each other, a pasted tail, a shell prompt
and the command above the output, markdown code fences, another OS's paths. A verdict that changes
under one of them is an accident of framing. Each transformation below takes a log's text and returns
the same run framed one way; the comment above it cites one public report showing that framing
(found with the project's search over public issue threads).

``TRANSFORMS`` maps a name to its function (text -> text, deterministic); ``bench/logs_metamorphic.py``
applies each to the dev split of ``tests/real/logs`` and counts the verdicts that move, and
``tests/logs/test_metamorphic.py`` pins the invariances achieved.
"""

from __future__ import annotations

import re
from typing import Callable

# An existing per-rank label at the start of a line (torchrun, srun -l, OpenMPI --tag-output): the rank a
# re-labelling transformation keeps. Independent of the analyzer's own prefix parser on purpose.
_LABEL = re.compile(r"^(?:\[(?:rank|default)(?P<a>\d+)\]:|\[\d+,(?P<b>\d+)\]<std(?:out|err)>:|(?P<c>\d{1,4}): )")
_BASE_SECONDS = 12 * 3600  # the clock of the first line; each line is 37 ms later than the one before


def _split(text: str) -> tuple[list[str], str]:
    """The lines of ``text`` and its line end (a final newline is kept as it was)."""
    end = "\n" if text.endswith("\n") else ""
    return (text[:-1] if end else text).split("\n"), end


def _join(lines: list[str], end: str) -> str:
    return "\n".join(lines) + end


def _owner(line: str) -> tuple[int | None, str]:
    """(rank of the line's existing launcher label, the line without it)."""
    match = _LABEL.match(line)
    if not match:
        return None, line
    rank = next(int(g) for g in match.groups() if g is not None)
    return rank, line[match.end():]


def _labelled(text: str) -> bool:
    return any(_LABEL.match(line) for line in text.split("\n"))


def relabel(label: Callable[[int], str]) -> Callable[[str], str]:
    """Every line under one launcher's per-rank label: a labelled line keeps its rank in the new format;
    in a log without labels every line is rank 0's (a one-process view of the run)."""
    def apply(text: str) -> str:
        lines, end = _split(text)
        any_label = _labelled(text)
        out = []
        for line in lines:
            rank, body = _owner(line)
            if rank is None and any_label:
                out.append(line)  # the launcher's own line: unlabelled in every launcher
            else:
                out.append(label(rank or 0) + body)
        return _join(out, end)
    return apply


def outer(prefix: Callable[[int], str]) -> Callable[[str], str]:
    """A prefix in front of every line, whatever it already carries (``prefix(line_index)``)."""
    def apply(text: str) -> str:
        lines, end = _split(text)
        return _join([prefix(i) + line for i, line in enumerate(lines)], end)
    return apply


def _clock(index: int) -> tuple[int, int, int, int]:
    """(hour, minute, second, microsecond) of line ``index``: increasing, so order in time is kept."""
    micros = _BASE_SECONDS * 1_000_000 + index * 37_000
    seconds, micro = divmod(micros, 1_000_000)
    return seconds // 3600 % 24, seconds // 60 % 60, seconds % 60, micro


def _iso(i: int) -> str:
    h, m, s, us = _clock(i)
    return f"2024-03-05T{h:02d}:{m:02d}:{s:02d}.{us:06d}123Z "


def _syslog(i: int) -> str:
    h, m, s, _ = _clock(i)
    return f"Mar  5 {h:02d}:{m:02d}:{s:02d} gpu-node-07 python3[48213]: "


def _bracket(i: int) -> str:
    h, m, s, us = _clock(i)
    return f"[2024-03-05 {h:02d}:{m:02d}:{s:02d},{us // 1000:03d}] "


def _glog(i: int) -> str:
    h, m, s, us = _clock(i)
    return f"I0305 {h:02d}:{m:02d}:{s:02d}.{us:06d} 48213 train.py:88] "


def stamp_own_line(text: str) -> str:
    """A web log viewer's export: each line's timestamp on a line of its own before it."""
    lines, end = _split(text)
    out = []
    for i, line in enumerate(lines):
        h, m, s, us = _clock(i)
        out += [f"2024-03-05 {h:02d}:{m:02d}:{s:02d}.{us // 1000:03d}", line]
    return _join(out, end)


_ERROR_WORD = re.compile(r"\b(ERROR|WARNING|WARN|INFO|Traceback)\b")
_EXCEPTION_LINE = re.compile(r"^(\s*)((?:[A-Za-z_]\w*\.)*[A-Z]\w*(?:Error|Exception|Interrupt)):(.*)$")
_FILE_LINE = re.compile(r'^(\s*File )"([^"]+)", line (\d+)')


def ansi_colour(text: str) -> str:
    """Terminal colours kept by ``script``, ``tee`` of a tty, CI consoles and log collectors: levels and
    ``Traceback`` coloured, Python 3.13's coloured exception and frame lines, red stderr lines."""
    lines, end = _split(text)
    out = []
    for line in lines:
        if (m := _EXCEPTION_LINE.match(line)):
            line = f"{m.group(1)}\x1b[1;35m{m.group(2)}\x1b[0m: \x1b[35m{m.group(3).lstrip()}\x1b[0m"
        elif (m := _FILE_LINE.match(line)):
            line = f'{m.group(1)}\x1b[35m"{m.group(2)}"\x1b[0m, line \x1b[35m{m.group(3)}\x1b[0m' + line[m.end():]
        else:
            line = _ERROR_WORD.sub(lambda w: f"\x1b[1;31m{w.group(1)}\x1b[0m", line)
            if "rror" in line or "FAIL" in line:
                line = f"\x1b[31m{line}\x1b[0m"
        out.append(line)
    return _join(out, end)


def _loguru(i: int) -> str:
    h, m, s, us = _clock(i)
    return f"2024-03-05 {h:02d}:{m:02d}:{s:02d}.{us // 1000:03d} | ERROR    | __main__:main:42 - "


_FRAME = re.compile(r'^(\s*)File "([^"]+)", line (\d+), in (.*)$')
_HEADER = "Traceback (most recent call last):"


def ipython_traceback(text: str) -> str:
    """Tracebacks as IPython/Jupyter prints them: the exception's type beside the header, frames as
    ``File path:line, in func``, a rule above."""
    lines, end = _split(text)
    out = []
    for i, line in enumerate(lines):
        if line.strip() == _HEADER:
            kind = next((m.group(2).split(".")[-1] for later in lines[i + 1:i + 200]
                         if (m := _EXCEPTION_LINE.match(later))), "Exception")
            out += ["-" * 75, f"{kind:<42}{_HEADER[:-1]}"]
        elif (m := _FRAME.match(line)):
            out.append(f"{m.group(1)}File {m.group(2)}:{m.group(3)}, in {m.group(4)}")
        else:
            out.append(line)
    return _join(out, end)


def _cri(i: int) -> str:
    return _iso(i) + "stderr F "


_BAR = "Epoch 0:   3%|▎         | 30/1000 [00:05<02:41,  6.01it/s]\rEpoch 0:   3%|▎         | 31/1000 [00:05<02:40,  6.02it/s]"


def bar_glued(text: str) -> str:
    """A tqdm bar's redraws (``\\r`` between them) left on the line that a traceback or an error then
    continued: the first line and every traceback header start after a bar (no newline ended it)."""
    lines, end = _split(text)
    return _join([_BAR + line if i == 0 or line.strip() == _HEADER else line for i, line in enumerate(lines)], end)


def crlf(text: str) -> str:
    """Windows line ends (a log saved or pasted on Windows)."""
    return text.replace("\r\n", "\n").replace("\n", "\r\n")


def tabs(text: str) -> str:
    """Leading runs of four spaces as tabs (an editor or a terminal that re-tabs)."""
    lines, end = _split(text)
    out = []
    for line in lines:
        stripped = line.lstrip(" ")
        out.append("\t" * ((len(line) - len(stripped)) // 4) + " " * ((len(line) - len(stripped)) % 4) + stripped)
    return _join(out, end)


def dedent(text: str) -> str:
    """Leading whitespace lost (pasted outside a code block, where the forum drops indentation)."""
    lines, end = _split(text)
    return _join([line.lstrip() for line in lines], end)


def indent4(text: str) -> str:
    """Every line indented by four spaces (a markdown indented code block)."""
    return outer(lambda i: "    ")(text)


def wrap(width: int) -> Callable[[str], str]:
    """Lines longer than ``width`` cut into rows of ``width`` characters (copied from a terminal of that
    width, or a forum quoting a fixed-width view)."""
    def apply(text: str) -> str:
        lines, end = _split(text)
        out = []
        for line in lines:
            while len(line) > width:
                out.append(line[:width])
                line = line[width:]
            out.append(line)
        return _join(out, end)
    return apply


def word_wrap(width: int) -> Callable[[str], str]:
    """Long lines broken at the last space before ``width`` (a forum or mail client re-flowing a paste;
    a word longer than the width stays whole)."""
    def apply(text: str) -> str:
        lines, end = _split(text)
        out = []
        for line in lines:
            while len(line) > width and " " in line[1:width + 1]:
                cut = line.rindex(" ", 1, width + 1)
                out.append(line[:cut])
                line = line[cut + 1:]
            out.append(line)
        return _join(out, end)
    return apply


def interleave(text: str) -> str:
    """Ranks printing at the same time: the labelled lines of different ranks merged round-robin, each
    rank's own order kept (unlabelled lines stay where they are). Unlabelled logs are left as they are:
    their lines cannot be told apart."""
    lines, end = _split(text)
    owners = [_owner(line)[0] for line in lines]
    ranks = sorted({r for r in owners if r is not None})
    if len(ranks) < 2:
        return text
    queues = {r: [line for line, o in zip(lines, owners) if o == r] for r in ranks}
    slots = [i for i, o in enumerate(owners) if o is not None]
    merged: list[str] = []
    while any(queues.values()):
        for r in ranks:
            if queues[r]:
                merged.append(queues[r].pop(0))
    out = list(lines)
    for slot, line in zip(slots, merged):
        out[slot] = line
    return _join(out, end)


def duplicate(text: str) -> str:
    """Every line printed twice in a row: two ranks printing the same output in step."""
    lines, end = _split(text)
    return _join([copy for line in lines for copy in (line, line)], end)


def tail(count: int) -> Callable[[str], str]:
    """Only the last ``count`` lines (what a user pastes of a long log)."""
    def apply(text: str) -> str:
        lines, end = _split(text)
        return _join(lines[-count:], end)
    return apply


def prose(text: str) -> str:
    """The shell prompt and the command above the output, and the prompt after it."""
    command = "(venv) user@gpu-node-07:~/project$ CUDA_VISIBLE_DEVICES=0,1 python train.py --config configs/base.yaml"
    return f"{command}\n{text}{'' if text.endswith(chr(10)) else chr(10)}(venv) user@gpu-node-07:~/project$\n"


def fence(text: str) -> str:
    """Markdown code fences around the log (copied out of an issue thread with them)."""
    return f"```shell\n{text}{'' if text.endswith(chr(10)) else chr(10)}```\n"


_POSIX_PATH = re.compile(r"(?<![\w.:/])/(?:home|root|usr|opt|data|mnt|workspace|scratch|lib|tmp)/[\w.+@~-]+(?:/[\w.+@~-]+)*")


def _windows(match: re.Match) -> str:
    path = match.group(0)
    parts = path.strip("/").split("/")
    if parts[0] in ("home", "Users") and len(parts) > 1:
        parts = ["Users", *parts[1:]]
    return "C:\\" + "\\".join(parts)


def windows_paths(text: str) -> str:
    """Absolute paths as a Windows install shows them (``C:\\Users\\...\\site-packages\\torch\\...``)."""
    return _POSIX_PATH.sub(_windows, text)


_HOME = re.compile(r"(/home/|/Users/|\\Users\\)([\w.-]+)")


def non_ascii_user(text: str) -> str:
    """A user name with non-ASCII letters in every home path (``/home/jürgen/``, ``C:\\Users\\张伟\\``)."""
    return _HOME.sub(lambda m: m.group(1) + ("jürgen.müller" if m.group(1) == "/home/" else "张伟"), text)



def details_block(text: str) -> str:
    """A GitHub issue's collapsed section: ``<details>``, a summary, a blank line and a fenced log."""
    body = text if text.endswith("\n") else text + "\n"
    return f"<details>\n<summary>Full log</summary>\n\n```\n{body}```\n\n</details>\n"


_JUPYTER_RULE = "\x1b[0;31m" + "-" * 75 + "\x1b[0m"


def jupyter_cell(text: str) -> str:
    """A traceback as a Jupyter notebook (IPython >= 8) shows a cell's output, colours kept: a red rule, the
    exception's type beside the header, frames as ``File path:line, in func(args)`` in green and cyan, each
    source line under its frame behind an arrow and its line number, the exception's type in red."""
    lines, end = _split(text)
    out = []
    frame_line = None
    for i, line in enumerate(lines):
        if line.strip() == _HEADER:
            kind = next((m.group(2).split(".")[-1] for later in lines[i + 1:i + 200]
                         if (m := _EXCEPTION_LINE.match(later))), "Exception")
            out += [_JUPYTER_RULE, f"\x1b[0;31m{kind}\x1b[0m{' ' * max(1, 42 - len(kind))}{_HEADER[:-1]}"]
            frame_line = None
        elif (m := _FRAME.match(line)):
            out.append(f"{m.group(1)}File \x1b[0;32m{m.group(2)}:{m.group(3)}\x1b[0m, in "
                       f"\x1b[0;36m{m.group(4)}\x1b[0;34m(*args, **kwargs)\x1b[0m")
            frame_line = int(m.group(3))
        elif frame_line is not None and line.startswith("    ") and line.strip():
            out.append(f"\x1b[0;32m--> {frame_line:4d}\x1b[0m {line.strip()}")
            frame_line = None
        elif (m := _EXCEPTION_LINE.match(line)):
            out.append(f"{m.group(1)}\x1b[0;31m{m.group(2)}\x1b[0m:{m.group(3)}")
            frame_line = None
        else:
            out.append(line)
            frame_line = None
    return _join(out, end)


_TYPOGRAPHY = (
    (re.compile(r"(?<![\w'])'(?=\S)([^'\n]*?\S)'(?![\w'])"), "\u2018\\1\u2019"),   # 'x' -> ‘x’
    (re.compile(r"(?<=\w)'(?=\w)"), "\u2019"),                                      # don't -> don’t
    (re.compile(r'"([^"\n]*)"'), "\u201c\\1\u201d"),                                # "x" -> “x”
    (re.compile(r"(?<!-)--(?!-)"), "\u2013"),                                       # -- -> –
    (re.compile(r"(?<!\.)\.\.\.(?!\.)"), "\u2026"),                                 # ... -> …
)


def typography(text: str) -> str:
    """A forum's typographer (Discourse, markdown-it) on a log pasted outside a code block: straight
    quotes curled (``'weight'`` -> ``‘weight’``, ``"x.py"`` -> ``“x.py”``), ``--`` as an en dash,
    ``...`` as an ellipsis."""
    for pattern, replacement in _TYPOGRAPHY:
        text = pattern.sub(replacement, text)
    return text


_SPACE_RUN = re.compile(r"(?:^ +| {2,})", re.MULTILINE)


def nbsp(text: str) -> str:
    """Copied from a rendered web page (a blog, a rendered notebook): indentation and runs of spaces come
    as no-break spaces (U+00A0)."""
    return _SPACE_RUN.sub(lambda m: "\u00a0" * len(m.group(0)), text)


def _json_string(value: str) -> str:
    out = value.replace("\\", "\\\\").replace('"', '\\"').replace("\t", "\\t").replace("\r", "\\r")
    return "".join(c if ord(c) >= 0x20 else f"\\u{ord(c):04x}" for c in out)


def docker_json(text: str) -> str:
    """Docker's json-file log driver (``/var/lib/docker/containers/<id>/<id>-json.log``, what a Kubernetes
    node keeps when Docker is its runtime): one JSON object per line, the line itself in ``log``."""
    lines, end = _split(text)
    return _join([f'{{"log":"{_json_string(line)}\\n","stream":"stderr","time":"{_iso(i).strip()}"}}'
                  for i, line in enumerate(lines)], end)


def _ts(i: int) -> str:
    h, m, s, _ = _clock(i)
    return f"Mar 05 {h:02d}:{m:02d}:{s:02d} "


def _asctime_name_level(i: int) -> str:
    h, m, s, us = _clock(i)
    return f"2024-03-05 {h:02d}:{m:02d}:{s:02d},{us // 1000:03d} - mmdet - INFO - "


def _go_log(i: int) -> str:
    h, m, s, _ = _clock(i)
    return f"2024/03/05 {h:02d}:{m:02d}:{s:02d} "


def _rich(i: int) -> str:
    h, m, s, _ = _clock(i)
    return f"[03/05/24 {h:02d}:{m:02d}:{s:02d}] "


def _clock_only(i: int) -> str:
    h, m, s, us = _clock(i)
    return f"[{h:02d}:{m:02d}:{s:02d}.{us // 1000:03d}] "


def _rfc5424(i: int) -> str:
    return f"{_iso(i)}gpu-node-07 python3[48213]: "



TRANSFORMS: dict[str, Callable[[str], str]] = {
    # torch >= 2.2 torchrun labels worker lines "[rank2]: ..." (hiyouga/LlamaFactory#5769, pytorch/pytorch#159747)
    "torchrun [rankN]:": relabel(lambda r: f"[rank{r}]:"),
    # torchrun --tee 3 labels by local rank "[default0]:" (meta-pytorch/torchx#412 passes --tee=3 for it)
    "torchrun [defaultN]:": relabel(lambda r: f"[default{r}]:"),
    # srun --label prefixes each task's lines with its task id "3: " (pytorch/pytorch#137402: srun + torchrun)
    "srun --label N: ": relabel(lambda r: f"{r}: "),
    # srun --label around torchrun: the task id in front of torchrun's own labels "0: [rank3]: ..."
    "srun label over torchrun": outer(lambda i: "0: "),
    # OpenMPI --tag-output "[1,0]<stderr>:" (sands-lab/grace#26 shows horovodrun passing --tag-output)
    "mpirun [1,N]<stderr>:": relabel(lambda r: f"[1,{r}]<stderr>:"),
    # SageMaker's MPI launcher "[1,mpirank:0,algo-1]<stderr>:" (its distributed training logs)
    "sagemaker [1,mpirank:N,algo-1]": relabel(lambda r: f"[1,mpirank:{r},algo-{r // 8 + 1}]<stderr>:"),
    # pdsh under the deepspeed launcher: "host: " in front of every remote line (deepspeedai/Megatron-DeepSpeed#126
    # "172.16.220.18: bash: ...")
    "deepspeed/pdsh host: ": outer(lambda i: "worker-1: "),
    "deepspeed/pdsh ip: ": outer(lambda i: "172.16.220.18: "),
    # Ray Train workers' output "(RayTrainWorker pid=..., ip=...) " (ray-project/ray#33290, ray#16979 "(pid=21065) ")
    "ray (RayTrainWorker pid, ip)": outer(lambda i: "(RayTrainWorker pid=423719, ip=172.16.0.2) "),
    # kubectl logs --prefix "[pod/<name>/<container>] " (kubeflow/trainer#1129 asks for the pod name as a prefix)
    "kubectl --prefix [pod/...]": outer(lambda i: "[pod/pytorchjob-mnist-worker-0/pytorch] "),
    # docker compose "service-1  | " (a common local multi-container set-up)
    "docker compose svc | ": outer(lambda i: "trainer-1  | "),
    # kubectl logs --timestamps / cloud collectors: RFC 3339 nanoseconds in front (deepspeedai/DeepSpeed#5799
    # shows a collector's timestamps)
    "timestamp ISO-8601 Z": outer(_iso),
    # journald / syslog of a systemd unit "Mar  5 12:00:00 host python3[pid]: "
    "timestamp syslog": outer(_syslog),
    # Python logging's default asctime in brackets (DeepSpeed's "[2023-06-06 02:44:00,164] [WARNING] ...",
    # deepspeedai/DeepSpeedExamples#575)
    "timestamp [Y-m-d H:M:S,ms]": outer(_bracket),
    # glog "I0305 12:00:00.123456 pid file:line] " (pytorch/pytorch#46009, torch >= 2.4's "W0325 20:46:43.725000 ...")
    "timestamp glog": outer(_glog),
    # loguru's default format "2024-03-22 07:26:34.220 | ERROR    | module:func:12 - " (huggingface/datatrove#131)
    "loguru | LEVEL | where - ": outer(_loguru),
    # containerd's CRI log files "2024-...Z stderr F <line>" (what /var/log/pods holds; SumoLogic/
    # sumologic-kubernetes-collection#2106 documents parsing it)
    "containerd CRI stderr F": outer(_cri),
    # a web log viewer's export with each timestamp on its own line (deepspeedai/DeepSpeed#5799)
    "timestamp on its own line": stamp_own_line,
    # a progress bar's redraws glued to the next output (facebookresearch/fairseq#416 "...cl| epoch 002: ...")
    "tqdm bar glued before errors": bar_glued,
    # colours kept in a saved log (huggingface/datatrove#131 "ESC[31mESC[1mERROR ESC[0m")
    "ANSI colours": ansi_colour,
    # a log saved on Windows (pytorch/pytorch#118737 is a Windows torchrun log)
    "CRLF line ends": crlf,
    "indent as tabs": tabs,
    # Jupyter/IPython tracebacks "RuntimeError    Traceback (most recent call last)" / "File ~/x.py:12, in f"
    # (huggingface/transformers#36723, zai-org/GLM-4#237)
    "IPython traceback": ipython_traceback,
    # pytest's "E       " in front of the exception it reports (Lightning-AI/pytorch-lightning#3797)
    "pytest E-lines": outer(lambda i: "E       "),
    # a log quoted in a reply "> ..." (horovod/horovod#1363 quotes the report it answers)
    "markdown quote > ": outer(lambda i: "> "),
    # pasted outside a code block: the forum drops leading whitespace (deepspeedai/DeepSpeed#5799's traceback)
    "indent lost": dedent,
    "markdown indented block": indent4,
    # terminal-width wrapping (deepspeedai/DeepSpeed#2920: "--de\nepspeed-activation-checkpointing")
    "wrapped at 80 columns": wrap(80),
    "wrapped at 120 columns": wrap(120),
    "wrapped at 100 columns": wrap(100),
    # a forum re-flowing a paste at word boundaries (deepspeedai/DeepSpeed#5799's lines broken by its viewer)
    "re-flowed at words, 100 columns": word_wrap(100),
    "re-flowed at words, 80 columns": word_wrap(80),
    "re-flowed at words, 120 columns": word_wrap(120),
    # ranks writing over each other (hiyouga/LlamaFactory#5769 "[rank2]: frame #4 ..." between other ranks)
    "ranks interleaved": interleave,
    # every rank printing the same lines (facebookresearch/deit#28 "| distributed init (rank 3)" x4)
    "output duplicated by 2 ranks": duplicate,
    "last 150 lines": tail(150),
    # the prompt and command above the output (facebookresearch/deit#28 "(deit92) [...]$ NCCL_DEBUG=INFO bash train.sh")
    "shell prompt and command": prose,
    # copied out of an issue with its fence (most issue threads)
    "markdown code fence": fence,
    # Windows paths (DLLXW/baby-llama2-chinese#62 "C:\\Users\\123\\...\\site-packages\\torch\\distributed\\run.py")
    "Windows paths": windows_paths,
    # a non-ASCII user name in paths (linkedlist771/SoraWatermarkCleaner#35 "C:\\Users\\中文用户名")
    "non-ASCII user name": non_ascii_user,
    # a log in a GitHub issue's collapsed section "<details><summary>...</summary>" (most issue templates' "Logs")
    "GitHub <details> block": details_block,
    # a notebook's coloured traceback, IPython 8 frames "File ~/x.py:12, in f(*args)" and "--> 12" source lines
    # (huggingface/transformers#36723 pastes one)
    "Jupyter cell output, colours kept": jupyter_cell,
    # discuss.pytorch.org (Discourse) curls quotes outside code blocks ("Tensor for ‘out’ is on CPU, Tensor for
    # argument #1 ‘self’ ..." quoted from a forum thread in public code)
    "forum typography (curly quotes, en dash)": typography,
    # copied from a rendered web page: indentation as no-break spaces
    "no-break spaces": nbsp,
    # Docker's json-file driver lines {"log":"...\n","stream":"stderr","time":"..."}
    "docker json-file lines": docker_json,
    # moreutils ts "Mar 05 12:00:00 " (python train.py 2>&1 | ts)
    "timestamp ts (moreutils)": outer(_ts),
    # a logger's "asctime - name - LEVEL - " (mmcv/mmdet's "2021-03-05 12:00:00,123 - mmdet - INFO - ")
    "logger asctime - name - LEVEL - ": outer(_asctime_name_level),
    # a host in front of DeepSpeed's bracketed logger time (pdsh: "worker-1: [2023-06-06 02:44:00,164] ...")
    "host then [timestamp]": outer(lambda i: "worker-1: " + _bracket(i)),
    # a syslog forwarder's RFC 5424 time and host "2024-03-05T12:00:00.123Z gpu-node-07 python3[pid]: "
    "timestamp RFC 5424 + host": outer(_rfc5424),
    # Go's log package "2024/03/05 12:00:00 " (Go launchers and operators; a wrapper piping a job's output)
    "timestamp Go log Y/m/d": outer(_go_log),
    # rich's log time "[03/05/24 12:00:00] " (rich.logging handlers, many CLI tools)
    "timestamp rich [m/d/y H:M:S]": outer(_rich),
    # a time of day alone "[12:00:00.123] " (a job runner's console, IDE run consoles)
    "time of day only [H:M:S.ms]": outer(_clock_only),
    # a prefix no wording knows: a job runner's own fields (the analyzer must learn it from the paste itself)
    "an unknown tool's prefix": outer(lambda i: f"job-7f3a | w{i % 4} | "),
}
