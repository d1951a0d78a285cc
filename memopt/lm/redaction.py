"""Secret redaction: the values of LM credential variables of the environment, masked wherever they would show."""

from __future__ import annotations

import os
import re
from typing import Any

__all__ = ["credential_values", "redact", "redact_tree", "SECRET_MIN_LENGTH"]

# The variables LiteLLM reads provider credentials from: *_API_KEY (OPENAI_API_KEY, AZURE_API_KEY, ...),
# *_APIKEY (WATSONX_APIKEY), *_TOKEN (HF_TOKEN, DATABRICKS_TOKEN, AZURE_AD_TOKEN, AWS_SESSION_TOKEN), *_SECRET
# (AZURE_CLIENT_SECRET) and AWS's key pair.
_CREDENTIAL_NAME = re.compile(r"(?:API_?KEY|_TOKEN|_SECRET|_SECRET_ACCESS_KEY|_ACCESS_KEY_ID)$", re.IGNORECASE)
SECRET_MIN_LENGTH = 8


def credential_values() -> dict[str, str]:
    """Environment variables that hold LM credentials (see ``_CREDENTIAL_NAME``), long enough to be secrets."""
    return {name: value for name, value in os.environ.items()
            if _CREDENTIAL_NAME.search(name) and len(value.strip()) >= SECRET_MIN_LENGTH}


def redact(text: str) -> str:
    """``text`` with the value of every LM credential variable masked as ``***`` (nothing else is touched).

    Only variables named like provider credentials (``*_API_KEY``, ``*_APIKEY``, ``*_TOKEN``,
    ``*_SECRET``, AWS's keys) holding at least ``SECRET_MIN_LENGTH`` characters count, so an unrelated
    variable (``DB_PASSWORD=user``) or a short value never rewrites prompts, answers or data.
    """
    for value in sorted(credential_values().values(), key=len, reverse=True):
        if value in text:
            text = text.replace(value, "***")
    return text


def redact_tree(value: Any) -> Any:
    """A JSON-like value (dicts, lists, strings) with every string masked by `redact`; ``value`` itself when no
    credential value occurs in it."""
    secrets = list(credential_values().values())

    def mask(item: Any) -> Any:
        if isinstance(item, str):
            return redact(item) if any(s in item for s in secrets) else item
        if isinstance(item, dict):
            return {mask(k): mask(v) for k, v in item.items()}
        if isinstance(item, list | tuple):
            return [mask(v) for v in item]
        return item

    return mask(value) if secrets else value
