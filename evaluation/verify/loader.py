"""Load a copy of a zoo modeling file as a real module inside the installed transformers.

`load_model_module("bert", Path("hf_models/modeling_bert.py"), "modeling_bert_original")`
imports the parent package `transformers.models.bert`, then executes the file under the
module name `transformers.models.bert.modeling_bert_original`, registered in
`sys.modules` before `exec_module`, so that its relative imports
(`from .configuration_bert import BertConfig`, `from ...modeling_utils import ...`)
resolve against the installed package. Two copies (original and patched) loaded under two
aliases live side by side in one process and share nothing but the installed package.

The zoo's `owlv2` file comes from transformers 4.35.0, and the pinned 4.34.0 has neither
`transformers.models.owlv2` nor `transformers.modeling_attn_mask_utils`. For that case
the two missing 4.35.0 source files are vendored under `compat/` (unchanged, Apache-2.0)
and registered on demand: a synthetic package `transformers.models.owlv2` whose
`__path__` is `compat/owlv2`, and `transformers.modeling_attn_mask_utils`.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import types
from pathlib import Path

COMPAT_DIR = Path(__file__).resolve().parent / "compat"

# Top-level transformers modules (4.35.0) that the zoo may import but 4.34.0 lacks.
_COMPAT_TOP_MODULES = {"modeling_attn_mask_utils": COMPAT_DIR / "modeling_attn_mask_utils.py"}
# Models whose zoo file imports one of them.
_COMPAT_MODELS_NEEDING_TOP = {"owlv2"}


def _exec_file_as(name: str, path: Path) -> types.ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot make an import spec for {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(name, None)
        raise
    return module


def _ensure_compat_top_modules() -> None:
    for short, path in _COMPAT_TOP_MODULES.items():
        name = f"transformers.{short}"
        if name in sys.modules:
            continue
        try:
            importlib.import_module(name)
        except ModuleNotFoundError:
            module = _exec_file_as(name, path)
            setattr(importlib.import_module("transformers"), short, module)


def parent_package(model: str) -> types.ModuleType:
    """Import (or, for a model newer than the installed release, synthesise) the package
    `transformers.models.<model>` that the modeling file's relative imports resolve in."""
    name = f"transformers.models.{model}"
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as exc:
        compat = COMPAT_DIR / model
        if exc.name not in (name, None) or not compat.is_dir():
            raise
    _ensure_compat_top_modules()
    package = types.ModuleType(name)
    package.__path__ = [str(compat)]
    package.__package__ = name
    package.__file__ = str(compat / "__init__.py")
    sys.modules[name] = package
    setattr(importlib.import_module("transformers.models"), model, package)
    return package


def module_name(model: str, alias: str) -> str:
    return f"transformers.models.{model}.{alias}"


def package_of(model: str, path: Path) -> str:
    """The package under `transformers.models` a modeling file belongs to: the folder it
    sits in when the path keeps the wheel's layout (`.../transformers/models/<package>/
    modeling_<model>.py`, as the modern corpus and its patched copies do; one package may
    hold several files, e.g. `data2vec` holds `modeling_data2vec_text.py`), else `model`
    itself (the zoo's flat `hf_models/modeling_<model>.py`)."""
    parts = Path(path).parts
    if len(parts) >= 4 and parts[-4:-2] == ("transformers", "models") and parts[-2].isidentifier():
        return parts[-2]
    return model


def load_model_module(model: str, path: Path, alias: str, package: str | None = None) -> types.ModuleType:
    """Execute `path` as `transformers.models.<package>.<alias>` and return the module
    (`package`: default `package_of(model, path)`).

    Loading the same alias again replaces the earlier module (a fresh execution).
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(path)
    if not alias.isidentifier():
        raise ValueError(f"alias must be a Python identifier: {alias!r}")
    package = package or package_of(model, path)
    parent_package(package)
    if package in _COMPAT_MODELS_NEEDING_TOP:
        _ensure_compat_top_modules()
    name = module_name(package, alias)
    sys.modules.pop(name, None)
    return _exec_file_as(name, path)
