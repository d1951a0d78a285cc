"""Reading and writing memopt's files: one clear error for a bad input file, atomic writes, safe names.

Every reader raises one `DataError` naming the file and what to do (missing, not UTF-8, not JSON
with line and column, nested too deeply, a number too long to read); every writer goes through a
temporary file of its own and a rename, so an interrupted or failed write never leaves half a file
or a stray ``.tmp``. `check_writable` refuses an output path before any work is done.

File names built from data (sample ids, case ids, pipeline and op names, run ids) go through
`safe_name` and `inside`: a name that is already a plain file name (letters, digits, ``.``, ``-``,
``_``, no leading dot, at most 80 characters, not ending like a hashed name) is kept; any other becomes
a slug plus 8 hex digits of its SHA-256; and the resulting path must stay inside its folder. Where
many files are named at once (`distinct_names`), two ids that still share a name are one `DataError`
naming both, before any work, so one file never overwrites another.

A UTF-8 byte order mark at the start of a file (as Windows editors write it) is ignored. Text read as JSON must
be valid Unicode: a lone surrogate escape (``"\\ud800"``), which no UTF-8 file
can hold, is one `DataError` naming the file and the JSON path.
"""

from __future__ import annotations

import contextlib
import functools
import gzip
import hashlib
import json
import os
import re
import secrets
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from memopt.core.errors import ConfigError, DataError
from memopt.core.redaction import redact, redact_tree, secret_values

__all__ = ["loads_json", "read_json", "read_text", "write_atomic", "write_folder", "write_json", "check_writable",
           "safe_name",
           "inside", "file_lock", "distinct_names"]

_PLAIN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,79}$")
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
_HASHED = re.compile(r"-[0-9a-f]{8}$")  # how a hashed name ends: a plain id ending so is hashed too
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")


def _existing_file(path: str | Path, missing: str) -> Path:
    """``path`` if it is a regular file; else a `DataError`: ``missing`` when nothing is there, else what is."""
    path = Path(path)
    if path.is_file():
        return path
    if path.is_dir():
        raise DataError(f"{path}: is a directory; give a file.")
    if path.exists():
        raise DataError(f"{path}: is not a regular file (a device, socket or pipe); give a file.")
    raise DataError(f"{path}: {missing}")


def read_text(path: str | Path, *, missing: str) -> str:
    """The UTF-8 text of a file; ``missing`` says what to do when it does not exist."""
    path = _existing_file(path, missing)
    try:
        return path.read_text(encoding="utf-8-sig")  # a byte order mark (Windows editors) is no part of the text
    except UnicodeDecodeError:
        raise DataError(f"{path}: not UTF-8 text.") from None
    except OSError as e:
        raise DataError(f"{path}: unreadable ({e.strerror or e}).") from None


def loads_json(text: str | bytes) -> Any:
    """``json.loads`` with one rule for every JSON (or JSON line) memopt reads: a value nested too deeply for Python
    (a ``RecursionError``) or a number too long to read is a ``json.JSONDecodeError`` too, so each loader's one
    error naming its file and line covers it."""
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        raise
    except RecursionError:
        raise json.JSONDecodeError("nested too deeply to read", "", 0) from None
    except ValueError as e:  # Python's limit on the digits of an integer
        raise json.JSONDecodeError(f"a value too long to read ({e})", "", 0) from None


def read_json(path: str | Path, *, missing: str) -> Any:
    """Decoded JSON of a file (gzip-compressed or not); ``missing`` says what to do when it does not exist."""
    path = _existing_file(path, missing)
    try:
        raw = path.read_bytes()
        text = (gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw).decode("utf-8-sig")  # a BOM is ignored
        data = json.loads(text)
        if _SURROGATE_ESCAPE.search(text):  # rare: walk the data only then
            _check_unicode(path, data, "$")
        return data
    except json.JSONDecodeError as e:
        raise DataError(f"{path}: not valid JSON (line {e.lineno}, column {e.colno}: {e.msg}).") from None
    except UnicodeDecodeError:
        raise DataError(f"{path}: not UTF-8 text.") from None
    except RecursionError:
        raise DataError(f"{path}: JSON nested too deeply to read.") from None
    except ValueError as e:  # Python's limit on the digits of an integer
        raise DataError(f"{path}: unreadable JSON value ({e}).") from None
    except (OSError, EOFError) as e:
        raise DataError(f"{path}: unreadable ({e}).") from None


MAX_YAML_VALUES = 100_000  # values a YAML document may expand to, its aliases followed (a config holds far fewer)


def load_yaml(text: str) -> Any:
    """YAML text read with the safe loader (libyaml's where installed); a key written twice in one mapping is a
    ``yaml.YAMLError`` naming the key and its line, not the silent last-one-wins of plain YAML. Aliases are followed
    only as far as `MAX_YAML_VALUES` values: a few hundred bytes of nested aliases (the "billion laughs") would
    expand to billions of values for whatever reads the document next, so such a document is a ``yaml.YAMLError``."""
    loader = _unique_key_loader()(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        _check_expansion(node)
        return loader.construct_document(node)
    finally:
        loader.dispose()


def _check_expansion(root: Any) -> None:
    """A ``yaml.YAMLError`` when the node graph, its aliases expanded, holds more than `MAX_YAML_VALUES` values or
    an alias inside itself (counted once per distinct node, so the check itself stays small)."""
    import yaml

    sizes: dict[int, int] = {}
    stack: list[tuple[Any, bool]] = [(root, False)]
    open_nodes: set[int] = set()
    while stack:
        node, done = stack.pop()
        key = id(node)
        if done:
            open_nodes.discard(key)
            children = _children(node)
            sizes[key] = 1 + sum(sizes[id(c)] for c in children)
            if sizes[key] > MAX_YAML_VALUES:
                raise yaml.constructor.ConstructorError(
                    problem=f"its aliases expand to more than {MAX_YAML_VALUES:,} values (at line "
                            f"{node.start_mark.line + 1}; nested aliases that repeat each other, as in the 'billion "
                            "laughs'); write the values out instead of aliasing them")
            continue
        if key in sizes:
            continue
        if key in open_nodes:
            raise yaml.constructor.ConstructorError(
                problem=f"an alias refers to the value that holds it (at line {node.start_mark.line + 1}); a "
                        "document must not contain itself")
        open_nodes.add(key)
        stack.append((node, True))
        stack.extend((child, False) for child in _children(node) if id(child) not in sizes)


def _children(node: Any) -> list[Any]:
    import yaml

    if isinstance(node, yaml.MappingNode):
        return [part for pair in node.value for part in pair]
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    return []


@functools.cache
def _unique_key_loader() -> type:
    import yaml

    class UniqueKeyLoader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # type: ignore[misc]
        """The safe loader, refusing duplicate keys."""

    def mapping(loader: Any, node: Any) -> Any:
        seen: dict[Any, Any] = {}
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                continue
            key = loader.construct_object(key_node, deep=True)
            try:
                first = seen.setdefault(key, key_node.start_mark)
            except TypeError:  # an unhashable key: the safe constructor says so below
                continue
            if first is not key_node.start_mark:
                raise yaml.constructor.ConstructorError(
                    problem=f"the key {key!r} is written twice in one mapping (lines {first.line + 1} and "
                            f"{key_node.start_mark.line + 1}); YAML would keep only the last: remove or merge one")
        return loader.construct_mapping(node, deep=True)

    UniqueKeyLoader.add_constructor("tag:yaml.org,2002:map", mapping)
    return UniqueKeyLoader


def _check_unicode(path: Path, data: Any, where: str) -> None:
    """A `DataError` naming the JSON path of the first string (or key) holding a lone surrogate."""
    if isinstance(data, str):
        try:
            data.encode("utf-8")
        except UnicodeEncodeError as e:
            raise DataError(f"{path}: {where}: invalid Unicode (a lone surrogate \\u{ord(data[e.start]):04x} escape, "
                            "which is no character); fix or remove that text.") from None
    elif isinstance(data, dict):
        for key, value in data.items():
            _check_unicode(path, key, f"{where} (a key)")
            _check_unicode(path, value, f"{where}.{key}")
    elif isinstance(data, list):
        for i, value in enumerate(data):
            _check_unicode(path, value, f"{where}[{i}]")


def check_writable(path: str | Path, *, option: str = "--out", directory: bool = False,
                   reads: Iterable[str | Path | None] = ()) -> Path:
    """``path`` if it can be written (as a file, or a directory when ``directory``); else a `ConfigError`.

    Checked before any work is done: a file path must not be a directory (a directory path not a
    file), its nearest existing parent must be a writable directory, and it must not be one of the files
    the command ``reads`` (writing it would replace an input), nor a name of blanks or line breaks only.
    """
    if Path(path).name and not Path(path).name.strip():
        raise ConfigError(f"{option} {str(path)!r}: a file name of blanks only; give a name such as results.json.")
    path = Path(path)
    for source in reads:
        if source is not None and _same_file(path, Path(source)):
            raise ConfigError(f"{option} {path}: names {source}, a file this command reads or writes; the output "
                              "would replace it. Give another path.")
    if path.is_dir() and not directory:
        raise ConfigError(f"{option} {path}: is a directory; give a file name.")
    if path.exists() and not path.is_dir() and directory:
        raise ConfigError(f"{option} {path}: is a file; give a directory.")
    parent = path if directory and path.is_dir() else path.parent
    while not parent.exists() and parent != parent.parent:
        parent = parent.parent
    if not parent.is_dir():
        raise ConfigError(f"{option} {path}: {parent} is a file, not a directory.")
    probe = parent / f".memopt-probe.{secrets.token_hex(4)}.tmp"  # not os.access: root passes it even on /proc
    try:
        probe.open("xb").close()
    except OSError as e:
        raise ConfigError(f"{option} {path}: cannot write in {parent} ({e.strerror or e}).") from None
    with contextlib.suppress(OSError):
        probe.unlink()
    return path


def _same_file(a: Path, b: Path) -> bool:
    """Whether two paths name one existing file (links and relative spellings included)."""
    try:
        return a.is_file() and b.is_file() and os.path.samefile(a, b)
    except OSError:
        return False


def write_atomic(path: str | Path, data: str | bytes, *, masked: bool = False) -> Path:
    """Write text or bytes to ``path`` through a temporary file and a rename (parents created); a write the system
    refuses (disk full, read-only, no such place) is a `DataError` naming ``path``, and ``path`` is left as it was.
    Text is masked by `redact` first (a credential in data or an LM's reply never reaches a file) unless the caller
    says it is ``masked`` already."""
    path = Path(path)
    if isinstance(data, str) and not masked:
        data = redact(data)
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(tmp, "xb") as f:
            f.write(data.encode("utf-8") if isinstance(data, str) else data)
        os.replace(tmp, path)
    except BaseException as e:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        if isinstance(e, OSError):
            raise DataError(f"{path}: cannot be written ({e.strerror or e}); nothing was written there, choose "
                            "another path.") from None
        raise
    return path


def write_folder(folder: str | Path, files: dict[str, str | bytes]) -> Path:
    """Write ``files`` (relative path → content) into ``folder`` all at once: the folder is built beside it (a copy
    of what it holds, then the new files) and swapped in by one rename, so a reader sees the old folder or the new
    one, never a mix. A write the system refuses (disk full, read-only) is a `DataError` naming ``folder``, which is
    left as it was. Files of the folder that ``files`` does not name are kept; text is masked by `redact`."""
    import shutil

    folder = Path(folder)
    staged = folder.with_name(f".{folder.name}.{secrets.token_hex(4)}.new")
    try:
        folder.parent.mkdir(parents=True, exist_ok=True)
        if folder.is_dir():
            shutil.copytree(folder, staged, symlinks=True)
        else:
            staged.mkdir()
        hidden = secret_values()  # read once for the folder (each read scans the environment)
        for name, data in files.items():
            path = inside(staged, name)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(redact(data, hidden).encode("utf-8") if isinstance(data, str) else data)
        _swap(staged, folder)
    except BaseException as e:
        shutil.rmtree(staged, ignore_errors=True)
        if isinstance(e, OSError):
            raise DataError(f"{folder}: cannot be written ({e.strerror or e}); it was left as it was (nothing of the "
                            "new files is in it). Free space or choose another path, then run the command "
                            "again.") from None
        raise
    return folder


def _swap(staged: Path, folder: Path) -> None:
    """Put the folder ``staged`` in the place of ``folder`` by one rename (Linux's exchange when ``folder`` exists,
    else two renames, the old folder put back if the second fails); ``staged`` is gone afterwards."""
    import shutil

    if not folder.exists():
        os.rename(staged, folder)
        return
    if _exchange(staged, folder):
        shutil.rmtree(staged, ignore_errors=True)  # now the old folder
        return
    old = folder.with_name(f".{folder.name}.{secrets.token_hex(4)}.old")
    os.rename(folder, old)
    try:
        os.rename(staged, folder)
    except BaseException:
        os.rename(old, folder)
        raise
    shutil.rmtree(old, ignore_errors=True)


def _exchange(a: Path, b: Path) -> bool:
    """Swap two paths atomically (``renameat2(RENAME_EXCHANGE)``); False where the system cannot."""
    import ctypes

    try:
        renameat2 = ctypes.CDLL(None, use_errno=True).renameat2
    except (AttributeError, OSError):
        return False
    at_fdcwd, rename_exchange = -100, 2
    return renameat2(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), rename_exchange) == 0


def write_json(path: str | Path, data: Any, *, indent: int | None = 1) -> Path:
    """Write ``data`` as JSON (UTF-8, atomically), masked by `redact_tree` (secrets, values under secret keys), so the
    file stays valid JSON (a secret inside a number is ``"***"``, not a bare mask in the text)."""
    return write_atomic(path, json.dumps(redact_tree(data), indent=indent, ensure_ascii=False) + "\n", masked=True)


def safe_name(text: str, suffix: str = "") -> str:
    """A file name for a data-derived ``text``: itself when plain, else a slug plus a short hash; then ``suffix``.

    >>> safe_name("conv-30", ".json"), safe_name("../../etc/passwd", ".json")
    ('conv-30.json', 'etc_passwd-3754d6cb.json')
    """
    text = str(text)
    if _PLAIN.match(text) and ".." not in text and not _HASHED.search(text):
        return text + suffix
    slug = _UNSAFE.sub("_", text).strip("._-")[:60] or "x"
    return f"{slug}-{hashlib.sha256(text.encode('utf-8')).hexdigest()[:8]}{suffix}"


def distinct_names(ids: list[str], suffix: str = "", *, what: str = "sample id") -> dict[str, str]:
    """The `safe_name` of each id; a `DataError` naming both ids when two would share a file."""
    names: dict[str, str] = {}
    owner: dict[str, str] = {}
    for id_ in ids:
        name = safe_name(id_, suffix)
        other = owner.setdefault(name.lower(), id_)  # lower: a file system that ignores case would merge them too
        if other != id_:
            raise DataError(f"{what}s {other!r} and {id_!r} would both be written to the file {name}; rename one "
                            "of them.")
        names[id_] = name
    return names


def inside(folder: str | Path, name: str) -> Path:
    """``folder / name``, checked to stay inside ``folder`` (a `DataError` otherwise)."""
    folder = Path(folder)
    path = folder / name
    if not path.resolve().is_relative_to(folder.resolve()) or path.resolve() == folder.resolve():
        raise DataError(f"file name {name!r} would leave the folder {folder}; refusing to write it.")
    return path


@contextlib.contextmanager
def file_lock(path: str | Path, *, timeout: float = 120.0) -> Iterator[None]:
    """Hold an exclusive lock on the file ``path`` (created if needed) across processes."""
    from filelock import FileLock, Timeout

    lock = FileLock(str(path))
    try:
        lock.acquire(timeout=timeout)
    except Timeout:
        raise ConfigError(f"{path}: still locked after {timeout:.0f} s by another memopt process; "
                          "wait for it, or remove the lock file if no memopt is running.") from None
    try:
        yield
    finally:
        lock.release()
