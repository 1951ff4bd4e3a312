"""Redact secrets from everything the tool writes (report documents, rendered text, saved state).

One pass, two entry points: :func:`redact` walks a document (secret-named keys are masked
whatever their value), :func:`redact_text` masks secrets inside free text in every spelling a
log, command line or config carries: ``NAME=value``, ``NAME: value``, ``NAME value`` (upper-case
names), ``--password value``, JSON ``"password": "value"``, ``Authorization: Bearer …``,
``scheme://user:PASSWORD@``, ``wandb login <key>`` and the known token shapes (hf_, ghp_,
AKIA…, sk-, xox…). Values never swallow a backslash or a quote, so masking rendered JSON
keeps it valid.
"""

from __future__ import annotations

import re
from typing import Any

MASK = "***REDACTED***"

# The one list of secret words: every name pattern below and the fast-path prefilter are built from it.
_WORDS = r"TOKEN(?!S)|SECRET|PASSWORD|PASSWD|PASSPHRASE|API_?KEY|ACCESS_?KEY|PRIVATE_?KEY|CREDENTIALS?|AUTH_?KEY"
# the same words as command-line flags spell them: hyphen or underscore, and `--tokens-...` counts too
_FLAG_WORDS = _WORDS.replace("(?!S)", "").replace("_?", "[-_]?")
SECRET_NAME = re.compile(
    rf"({_WORDS}|AUTH|(^|_)KEY$|^AWS_|WANDB_API_KEY)", re.IGNORECASE)
ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_VALUE = r"[^\s'\"\\,;`<>]+"
# NAME=value / NAME: value where NAME looks secret (log lines, command lines, YAML)
ASSIGNMENT = re.compile(
    rf"(?P<name>\b[A-Za-z0-9_.-]*(?:{_WORDS})[A-Za-z0-9_]*)(?P<sep>\s*[=:]\s*)(?P<quote>\\?['\"]?)(?P<value>{_VALUE})",
    re.IGNORECASE)
# NAME value: an environment-style (upper-case) secret name followed by its value after spaces
SPACED = re.compile(rf"(?P<name>\b[A-Z0-9_]*(?:{_WORDS})[A-Z0-9_]*)(?P<sep>[ \t]+)(?P<value>{_VALUE})")
# --password value / --api-key=value / -password value
FLAG = re.compile(
    rf"(?P<name>(?<![\w-])--?[A-Za-z0-9_-]*(?:{_FLAG_WORDS})[A-Za-z0-9_-]*)(?P<sep>[ \t]*=[ \t]*|[ \t]+)"
    rf"(?P<quote>\\?['\"]?)(?P<value>{_VALUE})", re.IGNORECASE)
# "password": "value" (JSON, Python dict reprs), with the quotes possibly escaped inside a JSON string
QUOTED_KEY = re.compile(
    rf"(?P<name>\\?(?P<q>['\"])[A-Za-z0-9_.-]*(?:{_WORDS})[A-Za-z0-9_.-]*\\?(?P=q))(?P<sep>\s*:\s*)"
    r"(?P<quote>\\?['\"])(?P<value>[^'\"\\\s,}]+)", re.IGNORECASE)
AUTH_HEADER = re.compile(
    r"(?P<name>\b(?:Proxy-)?Authorization\s*[:=]\s*(?:(?:Bearer|Basic|Token|Digest)\s+)?|\bBearer\s+)"
    r"(?P<value>[A-Za-z0-9._~+/=-]{6,})", re.IGNORECASE)
WANDB_LOGIN = re.compile(r"(?P<name>\bwandb\s+login\s+(?:--?[a-z-]+(?:=\S+)?\s+)*)(?P<value>[0-9a-f]{40}\b)", re.IGNORECASE)
# values that are secrets whatever they are called
KNOWN_VALUES = re.compile(
    r"\b(hf_[A-Za-z0-9]{30,}|gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{40,}|sk-[A-Za-z0-9_-]{20,}"
    r"|AKIA[0-9A-Z]{16}|ASIA[0-9A-Z]{16}|xox[abposr]-[A-Za-z0-9-]{10,}|glpat-[A-Za-z0-9_-]{20,}"
    r"|eyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,})")
URL_PASSWORD = re.compile(r"(?P<scheme>[a-z][a-z0-9+.-]*://[^/\s:@\"'\\]+:)(?P<value>[^@\s/\"'\\]+)(?P<at>@)",
                          re.IGNORECASE)


def is_secret_name(name: str) -> bool:
    """True for variable names that conventionally hold secrets.

    In a dotted fact key only an upper-case last part names a variable (``env.HF_TOKEN``);
    ``trainstep.tokens_per_s`` is a measurement, not a secret.
    """
    if "." in name:
        name = name.rsplit(".", 1)[-1]
        if name != name.upper():
            return False
    return bool(ENV_NAME.match(name)) and bool(SECRET_NAME.search(name))


def _mask_value(match: re.Match) -> str:
    groups = match.groupdict()
    if groups["value"] == MASK or groups["value"].startswith("*"):
        return match[0]
    return f"{groups['name']}{groups.get('sep') or ''}{groups.get('quote') or ''}{MASK}"


# Every pattern above needs one of these fragments: text without any is returned as is (most report text).
# The name patterns need a secret word (any spelling of _WORDS is one of _FLAG_WORDS); the others their own prefix.
_MAYBE_SECRET = re.compile(
    rf"hf_|gh[pousr]_|github_pat_|sk-|AKIA|ASIA|xox|glpat-|eyJ|://|authoriz|bearer|wandb|{_FLAG_WORDS}", re.IGNORECASE)


def redact_text(text: str) -> str:
    """Mask secret-looking values inside free text."""
    if not text or not _MAYBE_SECRET.search(text):
        return text
    return _mask_all(text)


def _mask_all(text: str) -> str:
    text = KNOWN_VALUES.sub(MASK, text)
    text = URL_PASSWORD.sub(lambda m: f"{m['scheme']}{MASK}{m['at']}", text)
    for pattern in (AUTH_HEADER, WANDB_LOGIN, QUOTED_KEY, FLAG, ASSIGNMENT, SPACED):
        text = pattern.sub(_mask_value, text)
    return text


def redact(obj: Any) -> Any:
    """A deep copy of ``obj`` with secret-named entries and secret-looking strings masked."""
    if isinstance(obj, dict):
        out = {}
        for key, value in obj.items():
            if isinstance(key, str) and is_secret_name(key) and isinstance(value, (str, int, float)) \
                    and value not in ("", None):
                out[key] = MASK
            else:
                out[redact_text(key) if isinstance(key, str) else key] = redact(value)
        return out
    if isinstance(obj, list):
        return [redact(v) for v in obj]
    if isinstance(obj, tuple):
        return tuple(redact(v) for v in obj)
    if isinstance(obj, str):
        return redact_text(obj)
    return obj
