"""The catalogue: what Adopter knows of torch's API, as data generated from the pinned torch
by evaluation/torch_catalogue.py (`make catalogue`), and read here only.

- `torch.tsv`: every public torch name model code calls or builds, with its kind (module,
  class, function, method); rules may name these without `extern:`.
- `inputs/torch.tsv`: for each function and module (its `forward`), the parameters a call may
  pass by position or by keyword, with their positions and literal defaults: `F.softmax(input=x)`
  passes input 0, and `F.normalize(x)` leaves p at 2.0.
- `constructors/torch.tsv`: for each module class, its `__init__` parameters (position, or
  empty for a keyword-only one): what a rewrite may carry over to a kernel's constructor.
- `ops/torch.tsv` (written by hand): the canonical operations and every spelling of each
  (function, tensor method, module, operator, idiom), with the positional parameters of the
  builtins among them and the inputs a spelling fixes (`torch.square`: the exponent is 2).

The analyses (adopter/datalog/) and the rules and rewriter above them read these files
through this module; nothing else holds a library signature.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

CATALOGUE_DIR = Path(__file__).resolve().parent
KINDS = ("module", "class", "function", "method")
INPUTS_HEADER = "name\tparameter\tposition\tdefault"


def _rows(folder: Path, header: str) -> list[list[str]]:
    rows = []
    for path in sorted(folder.glob("*.tsv")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if line and not line.startswith("#") and line != header:
                rows.append(line.split("\t"))
    return rows


@lru_cache(maxsize=1)
def kinds() -> dict[str, str]:
    """Qualified name -> kind (module, class, function or method)."""
    return {name: kind for name, kind in _rows(CATALOGUE_DIR, "name\tkind")}


@lru_cache(maxsize=1)
def input_keywords() -> dict[str, tuple[tuple[str, int], ...]]:
    """Qualified name -> the (parameter, position) pairs a call may pass by position or by
    keyword, in position order (a method's receiver is position 0). Builtins take theirs from
    the operations table."""
    found: dict[str, list[tuple[str, int]]] = {}
    for name, parameter, position, _default in _rows(CATALOGUE_DIR / "inputs", INPUTS_HEADER):
        found.setdefault(name, []).append((parameter, int(position)))
    for spelling in spellings():
        if spelling.parameters and spelling.name not in found:
            found[spelling.name] = [(parameter, i) for i, parameter in enumerate(spelling.parameters)]
    return {name: tuple(sorted(pairs, key=lambda pair: pair[1])) for name, pairs in found.items()}


@lru_cache(maxsize=1)
def input_defaults() -> dict[str, tuple[tuple[str, str], ...]]:
    """Qualified name -> the (parameter, default) pairs of the parameters whose default is a
    literal, the default as its Python repr (`torch.nn.functional.normalize`: ("p", "2.0"), ...)."""
    found: dict[str, list[tuple[str, str]]] = {}
    for name, parameter, _position, default in _rows(CATALOGUE_DIR / "inputs", INPUTS_HEADER):
        if default:
            found.setdefault(name, []).append((parameter, default))
    return {name: tuple(pairs) for name, pairs in found.items()}


@dataclass(frozen=True)
class Spelling:
    """One way to write a canonical operation: `torch.Tensor.softmax` (a method) of
    `torch.nn.functional.softmax`."""

    op: str
    name: str
    form: str  # function, method, module, operator or idiom
    parameters: tuple[str, ...]  # positional, the receiver first; empty where inputs/ has them
    implied: tuple[tuple[str, str], ...] = ()  # (keyword, literal) of the operation's inputs the spelling fixes


FORMS = ("function", "method", "module", "operator", "idiom")


@lru_cache(maxsize=1)
def spellings() -> tuple[Spelling, ...]:
    """Every spelling of every canonical operation (ops/torch.tsv)."""
    found = []
    for op, name, form, parameters, implied in _rows(CATALOGUE_DIR / "ops", "op\tspelling\tform\tparameters\timplied"):
        if form not in FORMS:
            raise ValueError(f"ops: {name}: form {form!r} is not one of {FORMS}")
        fixed = tuple(tuple(pair.split("=", 1)) for pair in implied.split(",") if pair)
        if any(len(pair) != 2 for pair in fixed):
            raise ValueError(f"ops: {name}: implied {implied!r} is not `keyword=literal, ...`")
        found.append(Spelling(op, name, form, tuple(p for p in parameters.split(",") if p), fixed))
    return tuple(found)


@lru_cache(maxsize=1)
def op_of() -> dict[str, str]:
    """Spelling -> its canonical operation (not an idiom's node type: `*` is a product, and a
    square only where adopter/datalog/ops/idioms.lp says so)."""
    return {s.name: s.op for s in spellings() if s.form != "idiom"}


def spellings_of(op: str) -> tuple[str, ...]:
    """The spellings of canonical operation `op`, `op` itself first (itself alone when the table has no other)."""
    return (op, *sorted(s.name for s in spellings() if s.op == op and s.name != op))


@dataclass(frozen=True)
class Signature:
    """The parameters of a callable: those a call may pass by position, in order, and the
    keyword-only ones."""

    name: str
    positional: tuple[str, ...]
    keyword_only: frozenset[str] = frozenset()

    def accepts(self, keyword: str) -> bool:
        return keyword in self.positional or keyword in self.keyword_only


@lru_cache(maxsize=1)
def constructors() -> dict[str, Signature]:
    """Module class -> the signature of its `__init__` (without `self`)."""
    positional: dict[str, list[tuple[int, str]]] = {}
    keyword_only: dict[str, set[str]] = {}
    for name, parameter, position in _rows(CATALOGUE_DIR / "constructors", "name\tparameter\tposition"):
        if position:
            positional.setdefault(name, []).append((int(position), parameter))
        else:
            keyword_only.setdefault(name, set()).add(parameter)
    return {name: Signature(name, tuple(p for _, p in sorted(positional.get(name, ()))),
                            frozenset(keyword_only.get(name, ())))
            for name in positional.keys() | keyword_only.keys()}


def call_signature(name: str) -> Signature | None:
    """The signature of a catalogued function or module call (its `forward`), where Python
    could read it (builtins of torch._C have none)."""
    pairs = input_keywords().get(name)
    return Signature(name, tuple(p for p, _ in pairs)) if pairs else None
