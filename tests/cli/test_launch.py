"""The `adopter` command runs itself once more with malloc on huge pages (adopter/cli/launch.py)."""

import subprocess
import sys

import pytest

from adopter.cli import launch


@pytest.fixture
def glibc_with_thp(monkeypatch, tmp_path):
    mode = tmp_path / "enabled"
    mode.write_text("always [madvise] never\n")
    monkeypatch.setattr(launch, "THP_MODE", str(mode))
    monkeypatch.setattr(launch.platform, "libc_ver", lambda: ("glibc", "2.36"))
    return mode


def test_the_tunables_are_added_to_the_callers_tunables(glibc_with_thp):
    assert launch.tuned_environment({"A": "1"}) == {"A": "1",
                                                    "GLIBC_TUNABLES": "glibc.malloc.hugetlb=1:glibc.malloc.mxfast=0"}
    tuned = launch.tuned_environment({"GLIBC_TUNABLES": "glibc.malloc.arena_max=2"})
    assert tuned["GLIBC_TUNABLES"] == "glibc.malloc.arena_max=2:glibc.malloc.hugetlb=1:glibc.malloc.mxfast=0"
    tuned = launch.tuned_environment({"GLIBC_TUNABLES": "glibc.malloc.mxfast=64"})  # the caller's fastbins stay
    assert tuned["GLIBC_TUNABLES"] == "glibc.malloc.mxfast=64:glibc.malloc.hugetlb=1"


def test_nothing_changes_when_set_already_or_when_huge_pages_are_off(glibc_with_thp, monkeypatch):
    assert launch.tuned_environment({"GLIBC_TUNABLES": "glibc.malloc.hugetlb=0"}) is None  # the caller's choice
    glibc_with_thp.write_text("always madvise [never]\n")
    assert launch.tuned_environment({}) is None
    glibc_with_thp.unlink()
    assert launch.tuned_environment({}) is None
    monkeypatch.setattr(launch.platform, "libc_ver", lambda: ("", ""))
    assert launch.tuned_environment({}) is None


def test_python_dash_m_adopter_runs_the_command_like_the_cli_module():
    tuned = subprocess.run([sys.executable, "-m", "adopter", "rules", "list"], capture_output=True, text=True)
    plain = subprocess.run([sys.executable, "-m", "adopter.cli", "rules", "list"], capture_output=True, text=True)
    assert tuned.returncode == 0 and tuned.stdout == plain.stdout and "softmax" in tuned.stdout
