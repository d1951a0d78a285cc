"""mkdocs hook: the reference pages are made from the code at build time (`memopt.cli.reference`).

A line ``<!-- reference:commands -->`` (or ``experiment``, ``graph-schema``) in a page becomes the Markdown the code
makes, so the commands, the experiment keys and the graph schema cannot drift from what memopt does. The checkout the
site is built from comes first on the import path, so the pages describe its code, not another installed copy.
mkdocs.yml keeps this file out of the site (``exclude_docs``).
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = str(Path(__file__).resolve().parent.parent)


def on_config(config: object, **kwargs: object) -> object:
    """Put the checkout first on the import path (mkdocs restores the path it had after loading a hook)."""
    sys.path[:] = [ROOT, *(p for p in sys.path if p != ROOT)]
    return config


def on_page_markdown(markdown: str, **kwargs: object) -> str:
    """Replace the reference markers of a page with the Markdown made from the code."""
    from memopt.cli.reference import expand

    return expand(markdown)
