"""Two copies of one corpus's packages in one interpreter: the original and a patched one.

`make verify-dev` runs models of the development corpus (dev_models/<pkg>-<ver>/, source only)
whose patched file is often imported by other files of the package (torchtitan's MoE router by
every MoE model, torchvision's RoI heads by Faster R-CNN), so executing the patched file alone
under another name (loader.py's way for the zoo) would leave the model running the original. A
`SourceTree` instead imports the whole package from the corpus folder, with some modules taken
from other files (`overrides`: module name -> patched copy), and keeps its modules to itself:

    original = SourceTree(root, ["x_transformers"])
    patched = SourceTree(root, ["x_transformers"], {"x_transformers.x_transformers": copy})
    with original:
        net_a = original.module("x_transformers").TransformerWrapper(...)
    with patched:
        net_b = ...

Inside `with tree:` its modules are in `sys.modules` (and bound on their parent packages), so
imports, and lazy imports inside `forward`, resolve to that copy; on leaving, they are set aside
until the tree is entered again. Modules of the packages that are not in the corpus folder (it
holds the model code only: torchvision's `transforms`, torchtitan's `distributed`, litgpt's
`config`) come from the installed wheel (requirements-verify-dev.lock); each tree imports its own copy of
them too (an installed module that imports a corpus module must bind that tree's), except those
imported before any tree was entered, which all trees share (one that defines a torch.library
op must be imported once). A package named in `bare` does not run its `__init__.py`: its module is
made with the corpus folder and the installed folder as its path (litgpt's imports its whole CLI,
torchvision's loads compiled ops that fail here). `stubs` are modules made from a dict of
attributes instead of any file.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
import types
from pathlib import Path


class _Finder(importlib.abc.MetaPathFinder):
    def __init__(self, tree: "SourceTree"):
        self.tree = tree

    def find_spec(self, fullname, path=None, target=None):
        tree = self.tree
        if fullname.partition(".")[0] not in tree.packages:
            return None
        if fullname in tree.stubs:
            return importlib.machinery.ModuleSpec(fullname, _StubLoader(tree.stubs[fullname]))
        if fullname in tree.bare:
            locations = [str(p) for p in tree.package_dirs(fullname)]
            spec = importlib.machinery.ModuleSpec(fullname, _StubLoader({}), is_package=True)
            spec.submodule_search_locations = locations
            return spec
        file = tree.file_of(fullname)
        if file is None:
            return None  # not in the corpus: the installed package's, through the parent's path
        if file.name == "__init__.py":
            locations = [str(p) for p in tree.package_dirs(fullname)]
            return importlib.util.spec_from_file_location(fullname, file, submodule_search_locations=locations)
        return importlib.util.spec_from_file_location(fullname, file)


class _StubLoader(importlib.abc.Loader):
    def __init__(self, attributes: dict):
        self.attributes = attributes

    def create_module(self, spec):
        return None

    def exec_module(self, module):
        module.__dict__.update(self.attributes)


class SourceTree:
    """The modules of `packages` (top-level names) from the folder `root`, with `overrides`
    (module name -> file) replacing some of them; see the module docstring."""

    def __init__(self, root: Path, packages: list[str], overrides: dict[str, Path] | None = None,
                 bare: tuple[str, ...] = (), stubs: dict[str, dict] | None = None):
        self.root = Path(root).resolve()
        self.packages = set(packages)
        self.overrides = {name: Path(path).resolve() for name, path in (overrides or {}).items()}
        self.bare = set(bare)
        self.stubs = dict(stubs or {})
        self._finder = _Finder(self)
        self._modules: dict[str, types.ModuleType] = {}  # this tree's, while it is not active
        self._shadowed: dict[str, types.ModuleType] = {}  # others' modules of those names, while it is
        self._shared: set[str] = set()  # modules of the packages imported before it: every tree's
        self._active = False

    def file_of(self, name: str) -> Path | None:
        """The file module `name` runs from this tree: an override, else the corpus folder's."""
        if name in self.overrides:
            return self.overrides[name]
        base = self.root.joinpath(*name.split("."))
        for file in (base.with_suffix(".py"), base / "__init__.py"):
            if file.is_file():
                return file
        return None

    def package_dirs(self, name: str) -> list[Path]:
        """The folders a package's submodules are searched in: the corpus's, then the installed one's."""
        dirs = [self.root.joinpath(*name.split("."))]
        for entry in sys.path:
            candidate = Path(entry or ".").resolve().joinpath(*name.split("."))
            if candidate.is_dir() and candidate not in dirs and not candidate.is_relative_to(self.root):
                dirs.append(candidate)
        return [d for d in dirs if d.is_dir()]

    def _served_here(self, name: str) -> bool:
        """Whether this tree makes module `name` itself (from the corpus folder, an override,
        a bare package or a stub), so that a copy made elsewhere must not serve it."""
        return name in self.overrides or name in self.bare or name in self.stubs or self.file_of(name) is not None

    def _names(self) -> list[str]:
        return [n for n in sys.modules if n.partition(".")[0] in self.packages]

    def __enter__(self) -> "SourceTree":
        assert not self._active, "a SourceTree is not re-entrant"
        for name in self._names():
            if self._served_here(name):  # e.g. an installed copy of a corpus module: set aside
                self._shadowed[name] = sys.modules.pop(name)
        sys.modules.update(self._modules)
        self._shared = set(self._names()) - set(self._modules)
        for name in sorted(self._names()):
            self._bind(name, sys.modules[name])
        self._modules = {}
        sys.meta_path.insert(0, self._finder)
        importlib.invalidate_caches()
        self._active = True
        return self

    def __exit__(self, *exc) -> None:
        sys.meta_path.remove(self._finder)
        # every module of the packages imported inside the tree is the tree's: an installed module
        # that imports a corpus module must not keep this tree's copy for the next tree
        for name in self._names():
            if name not in self._shared:
                self._modules[name] = sys.modules.pop(name)
        sys.modules.update(self._shadowed)
        for name in sorted(self._names()):
            self._bind(name, sys.modules[name])
        self._shadowed = {}
        self._active = False

    @staticmethod
    def _bind(name: str, module: types.ModuleType) -> None:
        """`parent.child = module`, as an import does: `import a.b` then `a.b.x` reads the attribute."""
        parent, _, child = name.rpartition(".")
        if parent and parent in sys.modules:
            setattr(sys.modules[parent], child, module)

    def module(self, name: str) -> types.ModuleType:
        """Import `name` in this (active) tree."""
        assert self._active, "enter the tree first: `with tree:`"
        return importlib.import_module(name)
