"""Screenshot the graph viewer in a headless browser, to look at a layout change (a developer tool, not a test).

    python -m tests.viewer_screenshot GRAPH.json OUT.png [--case q3] [--node ID] [--size 1400x900]

Writes the page `memopt show` would write next to OUT.png (OUT.html) and has Chromium (``--browser``,
default ``chromium`` on the PATH, e.g. Debian's /usr/bin/chromium) render it headless, offline, with a
throw-away profile. ``--node ID`` opens the page at ``#node=ID`` (that node selected and centred at
zoom 1), the way to see labels close up. CI checks the layout without a browser
(``tests/trace/test_render.py::test_layout_keeps_nodes_and_labels_apart_and_inside_the_view``).
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from urllib.parse import quote


def main(argv: list[str] | None = None) -> int:
    """Render the viewer of a graph file and screenshot it; returns the browser's exit code."""
    from memopt.core.files import write_atomic
    from memopt.trace.io import load_graph
    from memopt.trace.render import render_html

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("graph", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("--case")
    parser.add_argument("--node")
    parser.add_argument("--size", default="1400x900")
    parser.add_argument("--browser", default="chromium")
    args = parser.parse_args(argv)
    browser = shutil.which(args.browser)
    if browser is None:
        print(f"no browser {args.browser!r} on the PATH; pass --browser /path/to/chromium", file=sys.stderr)
        return 2
    page = write_atomic(args.out.with_suffix(".html"), render_html(load_graph(args.graph), case=args.case))
    url = page.resolve().as_uri() + (f"#node={quote(args.node)}" if args.node else "")
    with tempfile.TemporaryDirectory(prefix="memopt-chromium-") as profile:
        done = subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu",
                               "--disable-background-networking", "--disable-component-update", "--disable-sync",
                               "--no-first-run",
                               f"--user-data-dir={profile}", f"--screenshot={args.out.resolve()}",
                               f"--window-size={args.size.replace('x', ',')}", url],
                              capture_output=True, text=True, timeout=120)
    if done.returncode == 0 and args.out.is_file():
        print(f"wrote {args.out} ({page} at {args.size})")
    else:
        print(done.stderr[-2000:], file=sys.stderr)
    return done.returncode


if __name__ == "__main__":
    sys.exit(main())
