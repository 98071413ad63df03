"""Patching without editing source: an import hook that rewrites the named modules in memory as
`adopter apply` would (the same rules, kernel set and refusals; the analysis cached by content),
so that `import litgpt.model` after `adopter.api.patch("litgpt.model")` gives the patched
classes. Nothing is written beside the source: the patched code is compiled from memory and
no bytecode is cached for it.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys
from dataclasses import dataclass, field
from pathlib import Path

from adopter.api.apply import plan_patches
from adopter.api.options import KERNEL_SETS
from adopter.extract.sources import ModuleNames
from adopter.records import Diagnostic, FilePatch
from adopter.rules.model import Rule
from adopter.rules.registry import load_rules
from adopter.support.cache import DEFAULT_DIR as DEFAULT_CACHE


@dataclass
class Patching:
    """An installed hook: which modules it rewrites, with what, and what it did to each module
    imported since (`patches`: the module's patch, its applied and refused matches;
    `diagnostics`: files it could not analyse, which were imported as they are)."""

    modules: frozenset[str]
    rules: list[Rule]
    kernels: str = "default"
    cache_dir: Path | None = DEFAULT_CACHE
    patches: dict[str, FilePatch] = field(default_factory=dict)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    _finder: "_Finder | None" = None

    def remove(self) -> None:
        """Uninstall the hook (modules imported through it stay as they were imported)."""
        if self._finder in sys.meta_path:
            sys.meta_path.remove(self._finder)

    def __enter__(self) -> "Patching":
        return self

    def __exit__(self, *exc) -> None:
        self.remove()

    def patched_source(self, name: str, path: str) -> str | None:
        """The module's source rewritten, or None where nothing is rewritten."""
        report = plan_patches([path], self.rules, jobs=1, cache_dir=self.cache_dir, kernels=self.kernels,
                              modules=ModuleNames(names=((str(Path(path).absolute()), name),)))
        self.diagnostics += report.diagnostics
        for patch in report.patches:
            self.patches[name] = patch
            if patch.changed:
                return patch.patched
        return None


class _Loader(importlib.machinery.SourceFileLoader):
    """A source file's loader that compiles the patched text, and writes no bytecode for it."""

    def __init__(self, fullname: str, path: str, text: str):
        super().__init__(fullname, path)
        self.text = text

    def get_code(self, fullname: str):
        return compile(self.text, self.path, "exec", dont_inherit=True)


class _Finder(importlib.abc.MetaPathFinder):
    def __init__(self, patching: Patching):
        self.patching = patching
        self.busy = False  # importing the kernels a patched module needs: every module as it is

    def find_spec(self, fullname, path, target=None):
        if self.busy or fullname not in self.patching.modules:
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is None or not isinstance(spec.loader, importlib.machinery.SourceFileLoader):
            return spec  # (a module without Python source: imported as it is)
        text = self.patching.patched_source(fullname, spec.origin)
        if text is None:
            return spec
        # The kernels first, with the modules they import as they are: an attention kernel
        # subclasses the class it replaces (BertSelfAttentionSDPA, transformers' BertSelfAttention),
        # and importing it from inside the patched module would find that module half-built.
        # So the kernel subclasses the original class, as it does beside a copy patched by apply.
        self.busy = True
        try:
            for kernels in ("adopter_kernels", "adopter_kernels.attention"):
                if f"{kernels} import" in text or f"import {kernels}" in text:
                    importlib.import_module(kernels)
        finally:
            self.busy = False
        sys.modules.pop(fullname, None)  # (imported as it is, for the kernels: the patched one replaces it)
        spec.loader = _Loader(fullname, spec.origin, text)
        return spec


def patch(*modules: str, rules: list[str] | None = None, kernels: str = "default",
          cache_dir: Path | None = DEFAULT_CACHE) -> Patching:
    """Rewrite `modules` (dotted names) as `adopter apply` would whenever they are imported from now
    on; returns the installed hook (`.remove()`, or use it as a context manager). A module
    imported already is not changed: patch before importing what builds the model."""
    if not modules:
        raise ValueError("name at least one module to patch (e.g. 'litgpt.model')")
    if kernels not in KERNEL_SETS:
        raise ValueError(f"unknown kernel set {kernels!r}: one of {', '.join(KERNEL_SETS)}")
    patching = Patching(frozenset(modules), load_rules(rules), kernels, cache_dir)
    already = sorted(m for m in modules if m in sys.modules)
    if already:
        raise ValueError(f"already imported, so it cannot be patched: {', '.join(already)} "
                         "(call patch() before the first import)")
    patching._finder = _Finder(patching)
    sys.meta_path.insert(0, patching._finder)
    return patching


def run_patched(target: str, args: list[str], patching: Patching, as_module: bool = False) -> None:
    """Run `target` (a script's path, or with `as_module` a module's name, as `python -m`) as
    `__main__` with `args` as its arguments, while `patching`'s hook rewrites what it imports."""
    import runpy

    sys.argv = [target, *args]
    if as_module:
        runpy.run_module(target, run_name="__main__", alter_sys=True)
    else:
        sys.path.insert(0, str(Path(target).resolve().parent))  # as `python script.py` puts the script's folder first
        runpy.run_path(target, run_name="__main__")
