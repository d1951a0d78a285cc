"""Secrets, masked by one rule wherever they would show: printed, logged, stored as an artifact, a param, a tag.

`redact` is the rule, for text:

- **URIs with a password**: ``scheme://user:PASSWORD@host`` shows as ``scheme://user:***@host``. The
  password runs to the *last* ``@`` of the URI, so one holding an unescaped ``@`` (or ``:``, ``/``,
  ``%40``) is masked whole; a URI without a password (``postgresql://user@host``) is left as it is.
- **The environment's credentials**: the values of variables named like credentials (``*_API_KEY``,
  ``*_APIKEY``, ``*_TOKEN``, ``*_SECRET``, AWS's keys, ``*PASSWORD``, ``*_PASSWD``) of at least
  `SECRET_MIN_LENGTH` characters, and the password of any URI an environment variable holds
  (``MLFLOW_TRACKING_URI``, ``MEMOPT_STORAGE``), wherever they occur.
- **Passwords memopt was given** (`remember_uri`: ``--storage``, ``--tracking-uri``, the experiment's
  URIs), in the forms they may take (as written, percent-decoded, percent-encoded), wherever they occur.

For data (`redact_tree`): the value under a key that names a secret (`secret_key`: ``api_key``,
``password``, ``secret``, ``credential``, a key ending in the word ``token``, so ``access_token`` is one and
``max_tokens`` or ``token_budget`` is not) is ``***``, and
every string passes through `redact`. Only values long enough to be secrets are masked outside URIs, so an
unrelated variable (``DB_PASSWORD=user``) never rewrites prompts, answers or data.
"""

from __future__ import annotations

import logging
import os
import re
import threading
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import quote, unquote

__all__ = ["MASK", "SECRET_MIN_LENGTH", "credential_values", "secret_values", "remember_uri", "remember_secrets",
           "uri_password", "secret_key", "redact", "redact_tree", "quoted_uri", "validation_problems", "mask_userinfo",
           "mask_process_output", "mask_log_handlers"]

MASK = "***"
SECRET_MIN_LENGTH = 8
# The variables LiteLLM reads provider credentials from: *_API_KEY (OPENAI_API_KEY, AZURE_API_KEY, ...),
# *_APIKEY (WATSONX_APIKEY), *_TOKEN (HF_TOKEN, DATABRICKS_TOKEN, AWS_SESSION_TOKEN), *_SECRET
# (AZURE_CLIENT_SECRET), AWS's key pair; and the passwords of databases and MLflow (PGPASSWORD,
# MLFLOW_TRACKING_PASSWORD).
_CREDENTIAL_NAME = re.compile(r"(?:API_?KEY|_TOKEN|_SECRET|_SECRET_ACCESS_KEY|_ACCESS_KEY_ID|PASSWORD|_PASSWD)$",
                              re.IGNORECASE)
_SECRET_KEY = re.compile(r"api[_-]?key|secret|password|passwd|credential|(?:^|[^a-z])token$", re.IGNORECASE)
# scheme://user:PASSWORD@host where PASSWORD runs to the last '@' followed by a host (a name or [address], an
# optional port, then '/', '?', '#', punctuation or the URI's end: a space, a quote, a bracket; not a second URI).
_END = r"\s'\"<>`"
_HOST = rf"(?=[\w.~%-]*(?:\[[0-9A-Fa-f:.]*\])?(?::\d+)?(?:[/?#,;)\]{_END}]|:(?!//)|$))"
_URI_PASSWORD = re.compile(rf"(?P<head>\b[A-Za-z][A-Za-z0-9+.-]*://[^:/@{_END}]*):(?P<password>[^{_END}]*)@{_HOST}")
_USERINFO = re.compile(rf"//[^{_END}]*@{_HOST}")
_known: set[str] = set()
_lock = threading.Lock()


def uri_password(uri: str) -> str | None:
    """The password of a URI as written in it (up to its last ``@``), or None when it has none."""
    found = _URI_PASSWORD.search(uri)
    return found["password"] if found and found["password"] != MASK else None


def _forms(password: str) -> set[str]:
    """The ways a password may show: as written, percent-decoded, percent-encoded."""
    return {password, unquote(password), quote(password, safe=""), quote(unquote(password), safe="")}


def remember_uri(uri: str | None) -> None:
    """Remember the password of ``uri`` (if it has one) so `redact` masks it anywhere, in each of its forms."""
    password = uri_password(uri or "")
    if password:
        with _lock:
            _known.update(_forms(password))


def remember_secrets(value: Any) -> None:
    """Remember the secrets a config holds (values under secret-named keys, passwords of its URIs), so `redact`
    masks them wherever they show later (an error quoting the config, a log line)."""
    if isinstance(value, str):
        remember_uri(value)
    elif isinstance(value, Mapping):
        for k, v in value.items():
            if isinstance(k, str) and secret_key(k) and isinstance(v, str | int) and not isinstance(v, bool):
                with _lock:
                    _known.add(str(v))
            else:
                remember_secrets(v)
    elif isinstance(value, list | tuple):
        for v in value:
            remember_secrets(v)


def credential_values() -> dict[str, str]:
    """Environment variables that hold credentials (see ``_CREDENTIAL_NAME``), long enough to be secrets."""
    return {name: value for name, value in os.environ.items()
            if _CREDENTIAL_NAME.search(name) and len(value.strip()) >= SECRET_MIN_LENGTH}


def secret_values() -> list[str]:
    """Every value `redact` masks outside URIs, longest first: credentials of the environment, passwords of the
    URIs the environment holds, passwords memopt was given."""
    found = set(credential_values().values())
    for value in os.environ.values():
        if "://" in value and (password := uri_password(value)):
            found.update(_forms(password))
    with _lock:
        found.update(_known)
    return sorted((v for v in found if len(v.strip()) >= SECRET_MIN_LENGTH), key=len, reverse=True)


def secret_key(name: str) -> bool:
    """Whether a key (of a config, a param, a tag) names a secret: its value is never shown."""
    return bool(_SECRET_KEY.search(name))


def redact(text: str, secrets: Sequence[str] | None = None) -> str:
    """``text`` with every URI password and every secret value masked as ``***`` (see the module docstring);
    ``secrets``: `secret_values` read once by a caller that masks many strings (reading them scans the
    environment)."""
    if "://" in text:
        text = _URI_PASSWORD.sub(rf"\g<head>:{MASK}@", text)
    for value in secret_values() if secrets is None else secrets:
        if value in text:
            text = text.replace(value, MASK)
    return text


def mask_userinfo(text: str) -> str:
    """``text`` with the whole user part of every URL (``//user:password@``, or a key as user) shown as ``***``,
    then `redact`: for values that never hold a user name worth showing (an LM spec's server URL)."""
    return redact(_USERINFO.sub(f"//{MASK}@", text))


def redact_tree(value: Any) -> Any:
    """A JSON-like value with the values under secret-named keys as ``***``, every string masked by `redact` and
    every number that shows a secret as ``***``; ``value`` itself when nothing in it is masked."""
    changed = False
    secrets = secret_values()

    def mask(item: Any) -> Any:
        nonlocal changed
        if isinstance(item, str):
            shown = redact(item, secrets)
            changed = changed or shown != item
            return shown
        if isinstance(item, Mapping):
            out = {}
            for k, v in item.items():
                if isinstance(k, str) and secret_key(k) and v not in (None, "", MASK) and not isinstance(v, Mapping):
                    changed = True
                    out[mask(k)] = MASK
                else:
                    out[mask(k)] = mask(v)
            return out
        if isinstance(item, list | tuple):
            return [mask(v) for v in item]
        if isinstance(item, int | float) and not isinstance(item, bool) and redact(str(item), secrets) != str(item):
            changed = True
            return MASK
        return item

    shown = mask(value)
    return shown if changed else value


def quoted_uri(uri: str) -> str:
    """``uri`` with the characters of its password that a URI parser would misread (``@``, ``/``, ``?``, ``#``)
    percent-encoded, so a password holding them reaches the server whole; other URIs unchanged."""
    found = _URI_PASSWORD.match(uri)
    if not found:
        return uri
    password = found["password"]
    return f"{found['head']}:{quote(password, safe=':%!$&()*+,;=~')}@{uri[found.end():]}"


def validation_problems(error: Any) -> str:
    """A pydantic ``ValidationError`` as ``where: what`` clauses joined by ``; ``, never echoing an input value
    (the value of a rejected config may be an API key)."""
    parts = []
    for problem in error.errors(include_input=False, include_url=False):
        where = ".".join(str(part) for part in problem.get("loc", ())) or "(top level)"
        parts.append(f"{where}: {redact(str(problem.get('msg', '')))}")
    return "; ".join(parts) or redact(str(error).splitlines()[0] if str(error) else type(error).__name__)


class _MaskingFormatter(logging.Formatter):
    """A log formatter whose text (of the formatter it wraps, if any) passes through `redact`."""

    def __init__(self, inner: logging.Formatter | None = None) -> None:
        super().__init__("%(message)s")
        self.inner = inner

    def format(self, record: logging.LogRecord) -> str:
        return redact(self.inner.format(record) if self.inner is not None else super().format(record))


def mask_log_handlers(logger_name: str) -> None:
    """Make the handlers a library set on its own logger (MLflow's) pass their text through `redact`."""
    for handler in logging.getLogger(logger_name).handlers:
        if not isinstance(handler.formatter, _MaskingFormatter):
            handler.setFormatter(_MaskingFormatter(handler.formatter))


def mask_process_output() -> None:
    """Make what this process logs, warns and prints of an uncaught error pass through `redact` (the CLI's entry
    calls it once): a root log handler on stderr (in the place of Python's last-resort one), the warnings' text,
    the traceback hook."""
    import sys
    import traceback
    import warnings

    root = logging.getLogger()
    if not root.handlers:
        handler = logging.StreamHandler()
        handler.setLevel(logging.WARNING)
        root.addHandler(handler)
    mask_log_handlers("")
    shown = warnings.formatwarning
    if not getattr(shown, "masked", False):
        def formatwarning(*args: Any, **kwargs: Any) -> str:
            return redact(shown(*args, **kwargs))

        formatwarning.masked = True  # type: ignore[attr-defined]
        warnings.formatwarning = formatwarning

    def excepthook(kind: type[BaseException], error: BaseException, tb: Any) -> None:
        sys.stderr.write(redact("".join(traceback.format_exception(kind, error, tb))))

    sys.excepthook = excepthook
