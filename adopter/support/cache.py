"""A per-file result cache, keyed by content: re-analysing an unchanged file is a read.

Where: a per-user folder (`platformdirs.user_cache_dir("adopter")`, e.g. `~/.cache/adopter`),
or `$ADOPTER_CACHE`; never a folder relative to the working directory, which a repository
could ship. The folder is created private (0700); one owned by another user or writable by
others is not used (a stranger could plant entries there).

What: an entry's key is the sha256 of the file's bytes plus a fingerprint of everything
that can change the result (the extractor's and the analyses' source, the compiled rules).
An entry is JSON and plain UTF-8 text, which cannot run code when read, behind a header
with its kind, format, sizes and sha256. Reading checks all of them and the caller's decoder checks the value's
shape: an entry that does not check is a miss, never an error and never a wrong result.
Writes are atomic (a temporary file and a rename); a write that fails (full disk, folder
deleted mid-run) is reported once by the caller and the run goes on uncached.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
import tempfile
import time
from functools import lru_cache
from pathlib import Path
from typing import Callable

PACKAGE = Path(__file__).resolve().parent.parent
# what patched models import, what edits source, and the front ends over the pipeline
# cannot change an analysis result
_NOT_FINGERPRINTED = ("kernels", "rewrite", "api", "cli")
FORMAT = 1  # the entry layout: part of every key, so another layout is never read
_MAGIC = b"adopter-cache\n"
_STALE_TEMP_SECONDS = 600  # a temporary file lives for milliseconds: older ones were left by a killed run


def default_dir() -> Path:
    """`$ADOPTER_CACHE`, else the per-user cache folder of this platform."""
    configured = os.environ.get("ADOPTER_CACHE")
    if configured:
        return Path(configured)
    import platformdirs

    return Path(platformdirs.user_cache_dir("adopter", appauthor=False))


DEFAULT_DIR = default_dir()  # read once, at import (the tests set ADOPTER_CACHE before)


@lru_cache(maxsize=1)
def code_fingerprint() -> str:
    """Hash of the extractor, the Datalog programs, the rules' code and the pipeline (with
    the names catalogue that the rule checker reads); not the runtime kernels, the rewriter,
    the API or the CLI, which no cached result depends on."""
    digest = hashlib.sha256(f"format {FORMAT}".encode())
    for pattern in ("*.py", "*.lp", "*.lark", "*.tsv"):
        _hash_files(digest, [path for path in sorted(PACKAGE.rglob(pattern))
                             if path.relative_to(PACKAGE).parts[0] not in _NOT_FINGERPRINTED])
    return digest.hexdigest()


@lru_cache(maxsize=1)
def rewrite_fingerprint() -> str:
    """`code_fingerprint` with the rewriter and the kernels it names: what a file's cached
    patch (adopter/api/apply.py) depends on beyond its matches."""
    digest = hashlib.sha256(code_fingerprint().encode())
    for folder in ("rewrite", "kernels"):
        _hash_files(digest, sorted((PACKAGE / folder).rglob("*.py")))
    return digest.hexdigest()


def _hash_files(digest, paths: list[Path]) -> None:
    """Add each file's path (below the package) and bytes to `digest`, in the given order."""
    for path in paths:
        digest.update(path.relative_to(PACKAGE).as_posix().encode())
        digest.update(path.read_bytes())


def entry_key(content: bytes, *parts: str) -> str:
    digest = hashlib.sha256(content)
    digest.update(code_fingerprint().encode())
    for part in parts:
        digest.update(b"\0" + part.encode())
    return digest.hexdigest()


def encode_entry(kind: str, value, texts: list[str] = ()) -> bytes:
    """An entry's bytes: a magic line, a header line (kind, format, sizes, sha256 of the
    payload), then the payload: `value` as JSON, then each of `texts` as raw UTF-8.

    Why texts apart: large text (a file's fact tables) is slow to escape into JSON and
    to read back; raw, it is a copy."""
    parts = [json.dumps(value, separators=(",", ":")).encode()] + [text.encode() for text in texts]
    digest = hashlib.sha256()
    for part in parts:
        digest.update(part)
    header = {"kind": kind, "format": FORMAT, "sizes": [len(part) for part in parts], "sha256": digest.hexdigest()}
    return b"".join([_MAGIC, json.dumps(header, sort_keys=True).encode(), b"\n", *parts])


def decode_entry(kind: str, data: bytes) -> tuple[object, list[str]]:
    """The JSON value and the texts of an entry; ValueError when anything does not check."""
    if not data.startswith(_MAGIC):
        raise ValueError("not a cache entry")
    start = data.index(b"\n", len(_MAGIC)) + 1
    header = json.loads(data[len(_MAGIC):start])
    payload = memoryview(data)[start:]
    sizes = header.get("sizes") if isinstance(header, dict) else None
    if not isinstance(sizes, list) or not sizes or not all(type(n) is int and n >= 0 for n in sizes) \
            or sum(sizes) != len(payload):
        raise ValueError("the header does not describe the payload")
    if header != {"kind": kind, "format": FORMAT, "sizes": sizes, "sha256": hashlib.sha256(payload).hexdigest()}:
        raise ValueError("the header does not match the payload")
    parts = []
    for size in sizes:
        parts.append(str(payload[:size], "utf-8"))
        payload = payload[size:]
    return json.loads(parts[0]), parts[1:]


class ResultCache:
    """Entries under `folder` (None: nothing is cached). `problem` says why a folder given
    is not used."""

    def __init__(self, folder: Path | None):
        self.folder = self.requested = folder  # (folder becomes None when it cannot be used)
        self.problem: str | None = None
        if folder is not None:
            self.problem = _prepare(folder)
            if self.problem:
                self.folder = None

    def get(self, key: str, kind: str, decode: Callable = lambda value, texts: value):
        """`decode(value, texts)` of an entry, or None when it is missing or does not check
        (`decode` raises ValueError, TypeError or KeyError for a value that does not fit)."""
        if self.folder is None:
            return None
        try:
            return decode(*decode_entry(kind, (self.folder / key[:2] / key).read_bytes()))
        except (OSError, ValueError, TypeError, KeyError, RecursionError):  # UnicodeDecodeError is a ValueError
            return None

    def put(self, key: str, kind: str, value, texts: list[str] = ()) -> str | None:
        """Store a JSON-ready value and texts; return why it could not be written, else None."""
        if self.folder is None:
            return None
        target = self.folder / key[:2] / key
        try:
            data = encode_entry(kind, value, texts)
            target.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".", suffix=".tmp")
        except OSError as error:
            return f"cannot write the cache in {self.folder}: {error.strerror or error}"
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
            os.replace(tmp, target)
        except OSError as error:
            Path(tmp).unlink(missing_ok=True)
            return f"cannot write the cache in {self.folder}: {error.strerror or error}"
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        return None


def _prepare(folder: Path) -> str | None:
    """Create the folder private, check that only this user can write it, and remove the
    temporary files of killed runs; return why it cannot be used, else None."""
    try:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        info = folder.stat()
    except OSError as error:
        return f"cache folder {folder} cannot be used ({error.strerror or error}): results are not cached"
    if not stat.S_ISDIR(info.st_mode):
        return f"cache folder {folder} is not a folder: results are not cached"
    if hasattr(os, "getuid") and info.st_uid != os.getuid():
        return f"cache folder {folder} belongs to another user: results are not cached"
    if info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return f"cache folder {folder} is writable by other users: results are not cached (chmod 700 it)"
    _remove_stale_temporaries(folder)
    return None


def _remove_stale_temporaries(folder: Path) -> None:
    """At most once per `_STALE_TEMP_SECONDS` (a marker file's time): walking every shard
    costs time in proportion to the entries, which every run would pay otherwise."""
    cutoff = time.time() - _STALE_TEMP_SECONDS
    marker = folder / ".cleaned"
    try:
        if marker.stat().st_mtime > cutoff:
            return
    except OSError:
        pass
    try:
        marker.touch()
        shards = [entry.path for entry in os.scandir(folder) if entry.is_dir(follow_symlinks=False)]
        for shard in shards:
            for entry in os.scandir(shard):
                if entry.name.startswith(".") and entry.name.endswith(".tmp") and entry.stat().st_mtime < cutoff:
                    os.unlink(entry.path)
    except OSError:
        pass  # best effort: a leftover costs disk, not correctness
