"""Redact secrets from everything a report carries (environment values, log lines, messages)."""

from __future__ import annotations

import re
from typing import Any

MASK = "***REDACTED***"

SECRET_NAME = re.compile(
    r"(TOKEN|SECRET|PASSW(OR)?D|API_?KEY|ACCESS_?KEY|PRIVATE_?KEY|CREDENTIAL|AUTH|(^|_)KEY$|^AWS_|^HF_TOKEN$|WANDB_API_KEY)",
    re.IGNORECASE)
ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
# NAME=value / NAME: value where NAME looks secret (log lines, command lines)
ASSIGNMENT = re.compile(
    r"(?P<name>\b[A-Za-z0-9_]*(?:TOKEN|SECRET|PASSWORD|PASSWD|API_KEY|APIKEY|ACCESS_KEY|PRIVATE_KEY|CREDENTIALS?)[A-Za-z0-9_]*)"
    r"(?P<sep>\s*[=:]\s*)(?P<quote>['\"]?)(?P<value>[^\s'\",;]+)", re.IGNORECASE)
# values that are secrets whatever they are called
KNOWN_VALUES = re.compile(
    r"\b(hf_[A-Za-z0-9]{30,}|gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{40,}|sk-[A-Za-z0-9_-]{20,}"
    r"|AKIA[0-9A-Z]{16}|ASIA[0-9A-Z]{16}|xox[abposr]-[A-Za-z0-9-]{10,}|glpat-[A-Za-z0-9_-]{20,}"
    r"|eyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,})\b")
URL_PASSWORD = re.compile(r"(?P<scheme>[a-z][a-z0-9+.-]*://[^/\s:@]+:)(?P<value>[^@\s/]+)(?P<at>@)", re.IGNORECASE)


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


def redact_text(text: str) -> str:
    """Mask secret-looking values inside free text."""
    if not text:
        return text
    text = KNOWN_VALUES.sub(MASK, text)
    text = URL_PASSWORD.sub(lambda m: f"{m['scheme']}{MASK}{m['at']}", text)
    return ASSIGNMENT.sub(lambda m: f"{m['name']}{m['sep']}{m['quote']}{MASK}", text)


def redact(obj: Any) -> Any:
    """A deep copy of ``obj`` with secret-named entries and secret-looking strings masked."""
    if isinstance(obj, dict):
        out = {}
        for key, value in obj.items():
            if isinstance(key, str) and is_secret_name(key) and isinstance(value, (str, int, float)) \
                    and value not in ("", None):
                out[key] = MASK
            else:
                out[key] = redact(value)
        return out
    if isinstance(obj, list):
        return [redact(v) for v in obj]
    if isinstance(obj, tuple):
        return tuple(redact(v) for v in obj)
    if isinstance(obj, str):
        return redact_text(obj)
    return obj
