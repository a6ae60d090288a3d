"""A cache of what registry files decode to, so that a start reads JSON instead of YAML.

Loading a registry parses its YAML manifests (which takes PyYAML, slow to import and to run),
decodes its schema files and hashes each released schema for the lock check. Each of these is
a pure function of a file's bytes, so its result is kept in a JSON file in the user's cache
folder (one per installation of evalreg, at most `MAX_FILES`), under a digest (BLAKE2b) of the
exact bytes it came from: a file edited in any way, in the same second and to the same size
included, is looked up under another key and read again.

The folder is `EVALREG_CACHE_DIR`, else `$XDG_CACHE_HOME/evalreg`, else `~/.cache/evalreg`;
an empty `EVALREG_CACHE_DIR` turns the cache off. A value is kept only where it reads back from
JSON exactly, types included (a YAML date, set or non-string key is not kept, and that file is
parsed at every start), and only the decoding is kept: every check of the decoded data runs on
a value from the cache as on one just parsed. The file holds at most `MAX_ENTRIES` values and
`MAX_CACHE_BYTES` bytes (those used last are kept), is replaced atomically, and is ignored when
it cannot be read, is corrupt, too large, not the user's own, or written by another version of
the code that decodes (evalreg, Python, PyYAML, orjson, msgspec): a cache never changes a result
or makes a command fail.
"""

from __future__ import annotations

import contextlib
import os
import stat
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import orjson

ENV_CACHE_DIR = "EVALREG_CACHE_DIR"
CACHE_PREFIX = "registry-cache-"
"""Cache files are named `registry-cache-<digest of the stamp>.json`: one for each installation
(see `cache_file`)."""
_EARLIER_NAME = "registry-cache.json"
"""The one cache file of earlier versions (one for every installation), removed as others are."""
MAX_FILES = 8
"""The most cache files kept in the folder (one per installation of evalreg used, such as a
project's virtual environment and a pre-commit hook's); beyond it, those changed least recently
are removed."""
MAX_ENTRIES = 1000
"""The most values the cache file holds (the built-in registry takes about 100)."""
MAX_CACHE_BYTES = 4 * 1024 * 1024
"""The largest cache file read or written, in bytes (4 MiB; the built-in registry takes about
0.3 MiB). Every start reads the whole file, so it is kept small: once it is full, the values
the last run that wrote it did not use go first."""
_FORMAT = 1
_OVERHEAD = 4096
"""Bytes set aside in `MAX_CACHE_BYTES` for what the file holds besides its values."""
_DECODERS = ("yaml", "orjson", "msgspec")
"""The libraries whose versions decide what a file decodes to (besides evalreg and Python)."""
_CODE = ("__init__.py", "io/yamlstrict.py", "io/codec.py", "registry/lock.py", "registry/cache.py")
"""evalreg's own files that decide it (its version is in `__init__.py`), watched as well for an
editable install."""


class _Miss:
    """The value of a key the cache does not hold."""

    def __repr__(self) -> str:
        return "MISS"


MISS: Any = _Miss()


def cache_directory() -> Path | None:
    """Return the folder of the cache, or None when the cache is turned off (or has no home)."""
    given = os.environ.get(ENV_CACHE_DIR)
    if given is not None:
        return Path(given) if given else None
    xdg = os.environ.get("XDG_CACHE_HOME", "")
    if xdg and os.path.isabs(xdg):
        return Path(xdg) / "evalreg"
    try:
        return Path.home() / ".cache" / "evalreg"
    except RuntimeError:  # no home directory to be found
        return None


def _stamps() -> Iterator[list[Any]]:
    """Yield the size and time of change of each file of the code that decodes registry files."""
    from importlib.machinery import PathFinder

    for name in _DECODERS:
        module = sys.modules.get(name)
        origin = getattr(module, "__file__", None)
        if origin is None:
            spec = PathFinder.find_spec(name)
            origin = None if spec is None else spec.origin
        yield _stat(origin)
    package = Path(__file__).resolve().parent.parent
    for part in _CODE:
        yield _stat(str(package / part))


def current_stamp() -> list[Any]:
    """Return what a cache file must have been written by: the cache's format, Python, and the
    size and time of change of each file of the code that decodes registry files."""
    return [_FORMAT, sys.version, *_stamps()]


def cache_file(folder: Path, stamp: list[Any] | None = None) -> Path:
    """Return the cache file in `folder` of the installation that `stamp` (by default, this
    one's) describes.

    Each installation (its evalreg, Python and decoders, where they are) has a file of its own:
    two used in turn would otherwise replace each other's cache at every start.
    """
    found = current_stamp() if stamp is None else stamp
    digest = _key_hasher()(orjson.dumps(found), digest_size=8).hexdigest()
    return folder / f"{CACHE_PREFIX}{digest}.json"


def _stat(path: str | None) -> list[Any]:
    if path is None:
        return [None]
    try:
        found = os.stat(path)
    except OSError:
        return [path]
    return [path, found.st_size, found.st_mtime_ns]


def _same(a: Any, b: Any) -> bool:
    """Return whether two decoded values are equal, with the same types and key order."""
    kind = type(a)
    if kind is not type(b):
        return False
    if kind is dict:
        return len(a) == len(b) and all(
            type(ka) is str and ka == kb and _same(va, vb)
            for (ka, va), (kb, vb) in zip(a.items(), b.items(), strict=True)
        )
    if kind is list:
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if kind is float:
        return repr(a) == repr(b)
    return kind in (str, int, bool, type(None)) and bool(a == b)


def _key_hasher() -> Any:
    try:  # not through hashlib, which loads OpenSSL: this runs at every start
        from _blake2 import blake2b
    except ImportError:  # pragma: no cover - an interpreter without the module
        from hashlib import blake2b
    return blake2b


class RegistryCache:
    """The values of a cache file, looked up by kind and by a digest of a file's bytes.

    Values are kept as JSON text, so that each lookup returns a new object that its user may
    change freely.
    """

    def __init__(self, path: Path | None, stamp: list[Any] | None = None) -> None:
        self.path = path
        self._stamp: list[Any] = []
        self._entries: dict[str, str] = {}
        self._used: dict[str, str] = {}
        self._changed = False
        self._blake2b: Any = None
        if path is not None:
            self._stamp = current_stamp() if stamp is None else stamp
            self._entries = self._read(path)

    @classmethod
    def open(cls) -> RegistryCache:
        """Return the user's cache (one that holds nothing and keeps nothing when turned off)."""
        folder = cache_directory()
        if folder is None:
            return cls(None)
        stamp = current_stamp()
        return cls(cache_file(folder, stamp), stamp)

    @property
    def enabled(self) -> bool:
        """Return whether the cache keeps anything."""
        return self.path is not None

    def _read(self, path: Path) -> dict[str, str]:
        try:  # not blocking: a FIFO in its place would wait for a writer forever
            handle = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        except OSError:
            return {}
        try:
            with os.fdopen(handle, "rb") as stream:
                found = os.fstat(handle)
                if not stat.S_ISREG(found.st_mode) or found.st_size > MAX_CACHE_BYTES:
                    return {}
                if hasattr(os, "getuid") and found.st_uid != os.getuid():
                    return {}  # another user's values could stand for any file
                data = orjson.loads(stream.read(MAX_CACHE_BYTES + 1))
        except (OSError, orjson.JSONDecodeError):
            return {}
        if not isinstance(data, dict) or data.get("stamp") != self._stamp:
            return {}
        entries = data.get("entries")
        if not isinstance(entries, dict) or len(entries) > MAX_ENTRIES:
            return {}
        if not all(type(value) is str for value in entries.values()):
            return {}
        return entries

    def key(self, data: bytes) -> str:
        """Return the digest that a file's bytes are looked up by ("" when turned off)."""
        if self.path is None:
            return ""
        if self._blake2b is None:
            self._blake2b = _key_hasher()
        return str(self._blake2b(data, digest_size=32).hexdigest())

    def get(self, kind: str, key: str) -> Any:
        """Return the value of `kind` kept for the bytes of `key`, or `MISS`."""
        name = f"{kind}:{key}"
        text = self._entries.get(name) if key else None
        if text is None:
            return MISS
        try:
            value = orjson.loads(text)
        except orjson.JSONDecodeError:
            return MISS
        self._used[name] = text
        return value

    def put(self, kind: str, key: str, value: Any) -> None:
        """Keep `value` as what the bytes of `key` decode to as `kind`, if JSON holds it exactly."""
        if not key:
            return
        try:
            text = orjson.dumps(value)
            same = _same(orjson.loads(text), value)
        except (TypeError, orjson.JSONEncodeError, RecursionError):
            return
        if same and len(text) <= MAX_CACHE_BYTES:
            self._used[f"{kind}:{key}"] = text.decode("utf-8")
            self._changed = True

    def save(self) -> None:
        """Write the cache file if a value was added: those used in this run first, then the
        others as long as they fit; quietly nothing when it cannot be written."""
        if self.path is None or not self._changed:
            return
        entries: dict[str, str] = {}
        size = 0
        for name, text in (*self._used.items(), *self._entries.items()):
            if name in entries or len(entries) >= MAX_ENTRIES:
                continue
            cost = len(name) + len(orjson.dumps(text)) + 4  # quoted and escaped, with `"":,`
            if size + cost > MAX_CACHE_BYTES - _OVERHEAD:
                continue
            entries[name] = text
            size += cost
        try:
            blob = orjson.dumps({"stamp": self._stamp, "entries": entries})
        except orjson.JSONEncodeError:  # pragma: no cover - the stamp holds only plain values
            return
        if len(blob) > MAX_CACHE_BYTES:
            return
        _write_quietly(self.path, blob)
        _prune(self.path)
        self._entries, self._changed = entries, False


def decoded(
    cache: RegistryCache | None,
    kind: str,
    data: bytes,
    decode: Callable[[bytes], Any],
    expect: type = object,
) -> Any:
    """Return `decode(data)`: from `cache` where it holds a value of type `expect` for these
    bytes, else worked out (whatever `decode` raises goes up) and kept there."""
    if cache is None:
        return decode(data)
    key = cache.key(data)
    value = cache.get(kind, key)
    if value is MISS or not isinstance(value, expect):
        value = decode(data)
        cache.put(kind, key, value)
    return value


def _write_quietly(path: Path, blob: bytes) -> None:
    """Replace `path` by `blob` atomically (temporary file and `os.replace`); never raise."""
    import tempfile

    temporary = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
        with os.fdopen(handle, "wb") as stream:
            stream.write(blob)
        os.replace(temporary, path)
    except OSError:
        if temporary is not None:
            with contextlib.suppress(OSError):
                os.unlink(temporary)


def _prune(kept: Path) -> None:
    """Remove the cache files of the folder of `kept` beyond `MAX_FILES`, those changed least
    recently first (`kept` stays), and the file of earlier versions; never raise."""
    try:
        with os.scandir(kept.parent) as listing:
            found = [
                (entry.stat().st_mtime_ns, entry.path)
                for entry in listing
                if (entry.name.startswith(CACHE_PREFIX) or entry.name == _EARLIER_NAME)
                and entry.name.endswith(".json")
                and entry.path != str(kept)
                and entry.is_file(follow_symlinks=False)
            ]
    except OSError:
        return
    earlier = [path for _, path in found if os.path.basename(path) == _EARLIER_NAME]
    newest_first = sorted((item for item in found if item[1] not in earlier), reverse=True)
    for path in [*earlier, *(path for _, path in newest_first[MAX_FILES - 1 :])]:
        with contextlib.suppress(OSError):
            os.unlink(path)
