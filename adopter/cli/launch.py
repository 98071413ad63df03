"""Start the `adopter` command with glibc's malloc on transparent huge pages.

Why: every file is analysed in a fresh fork (adopter/support/forks.py), whose heap starts empty.
clingo then fills it one 4 KiB page fault at a time, and in a cold run those faults are a
sizeable share of the workers' CPU; the small pages cost TLB misses too.
`GLIBC_TUNABLES=glibc.malloc.hugetlb=1` makes malloc ask the kernel for 2 MiB pages
(`madvise`), where the kernel's THP mode allows that: far fewer faults, and less CPU per
worker (the measurements are in CHANGELOG.md). A worker given a large file turns them off
again for itself (adopter/matches/pipeline.py's SMALL_PAGES_BYTES says why).
`glibc.malloc.mxfast=0` (no fastbins) goes with it: each fork's first large allocation would
otherwise consolidate the fastbins it inherits from the parent, writing to (and so copying)
pages of the parent's freed chunks.

glibc reads the tunable only when a process starts. So the command runs itself again,
once, with the tunable added. This is done before the CLI's imports, so the first
process costs only an interpreter start. Nothing is changed when:
- the caller already set `glibc.malloc.hugetlb` (any value; a `mxfast` of the caller's is kept too),
- the C library is not glibc,
- THP is off (`never`).
"""

from __future__ import annotations

import os
import platform
import sys

TUNABLE = "glibc.malloc.hugetlb"
NO_FASTBINS = "glibc.malloc.mxfast"
THP_MODE = "/sys/kernel/mm/transparent_hugepage/enabled"


def _huge_pages_possible() -> bool:
    try:
        with open(THP_MODE) as mode:
            return "[never]" not in mode.read()
    except OSError:
        return False


def tuned_environment(environ: dict[str, str]) -> dict[str, str] | None:
    """The environment to run again with, or None when this process should go on as it is."""
    tunables = environ.get("GLIBC_TUNABLES", "")
    if TUNABLE in tunables or platform.libc_ver()[0] != "glibc" or not _huge_pages_possible():
        return None
    added = [f"{TUNABLE}=1"] + ([f"{NO_FASTBINS}=0"] if NO_FASTBINS not in tunables else [])
    return {**environ, "GLIBC_TUNABLES": ":".join(filter(None, (tunables, *added)))}


def main() -> None:
    environ = tuned_environment(dict(os.environ))
    if environ is not None and sys.executable:
        try:  # the same interpreter and arguments (`-m adopter`, or the `adopter` script)
            os.execve(sys.executable, [sys.executable, *sys.orig_argv[1:]], environ)
        except OSError:
            pass  # cannot run itself again: go on with plain pages
    from adopter.cli.app import main as cli_main

    cli_main()
