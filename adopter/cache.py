"""A per-file result cache, keyed by content: re-analysing an unchanged file is a read.

An entry's key is the sha256 of the file's bytes plus a fingerprint of everything that
can change the result (the extractor's and the analyses' source, the compiled rules).
Entries are pickles written atomically under `build/cache/`; a corrupt or unreadable
entry is a miss, never an error.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import tempfile
from functools import lru_cache
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# `ADOPTER_CACHE=/some/dir` moves the cache (the tests use a temporary one).
DEFAULT_DIR = Path(os.environ.get("ADOPTER_CACHE", "build/cache"))


@lru_cache(maxsize=1)
def code_fingerprint() -> str:
    """Hash of the extractor, the Datalog programs and the pipeline code (with the names
    catalogue that the rule checker reads)."""
    digest = hashlib.sha256()
    for folder, pattern in (("extractor", "*.py"), ("datalog", "*.lp"), ("datalog", "*.py"),
                            ("adopter", "*.py"), ("rules", "*.py"), ("rules", "*.lark"), ("rules", "*.tsv")):
        for path in sorted((ROOT / folder).rglob(pattern)):
            digest.update(path.relative_to(ROOT).as_posix().encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()


def entry_key(content: bytes, *parts: str) -> str:
    digest = hashlib.sha256(content)
    digest.update(code_fingerprint().encode())
    for part in parts:
        digest.update(b"\0" + part.encode())
    return digest.hexdigest()


class ResultCache:
    def __init__(self, folder: Path | None = DEFAULT_DIR):
        self.folder = folder

    def get(self, key: str):
        if self.folder is None:
            return None
        try:
            with (self.folder / key[:2] / key).open("rb") as handle:
                return pickle.load(handle)
        except (OSError, pickle.PickleError, EOFError, AttributeError, ImportError):
            return None

    def put(self, key: str, value) -> None:
        if self.folder is None:
            return
        target = self.folder / key[:2] / key
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=target.parent, suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as handle:
                pickle.dump(value, handle, protocol=pickle.HIGHEST_PROTOCOL)
            os.replace(tmp, target)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
