"""Every call into clingo's private C bindings (`clingo._internal`), in one place, behind
the same two operations the public API offers: ground a control with Adopter's `@functions`,
and read the atoms of one relation. adopter/datalog/engine.py uses these where the bindings
are there and work, and clingo's public API otherwise (`PublicClingo`); both give the same
atoms (tests/datalog/test_engine.py runs each).

Why the C bindings at all: through pyclingo, every row of every input relation handed to
`@input`, every argument of `@cat`, `@size` and `@nth`, and every atom read back becomes a
`clingo.Symbol` object in Python, and on a whole file those wrappers cost a sizeable part of
its analysis. Here rows are parsed by clingo from their text, the builtins work on clingo's
C symbols, and an atom's arguments come back as symbol ids (ints).
"""

from __future__ import annotations

from typing import Callable, Sequence

import clingo

try:  # pyclingo's C bindings: a private module, so only the versions it was tested with are trusted
    from clingo._internal import _ffi, _handle_error, _lib
except ImportError:  # pragma: no cover - another clingo build
    _ffi = _lib = _handle_error = None

REQUIRED = ("clingo_control_ground", "clingo_parse_term", "clingo_symbol_arguments", "clingo_symbol_string",
            "clingo_symbol_create_string", "clingo_symbol_create_number", "clingo_symbol_number",
            "clingo_symbol_to_string_size", "clingo_symbol_to_string", "clingo_symbol_type",
            "clingo_symbolic_atoms_begin", "clingo_symbolic_atoms_end", "clingo_symbolic_atoms_next",
            "clingo_symbolic_atoms_iterator_is_equal_to", "clingo_symbolic_atoms_is_fact",
            "clingo_symbolic_atoms_symbol", "clingo_signature_create", "clingo_set_error", "clingo_error_message")


def available() -> bool:
    """Whether this clingo has the C bindings this module calls, with every function it needs."""
    return _lib is not None and all(hasattr(_lib, name) for name in REQUIRED)


class _Grounding:
    """What one `ground` hands its calls into Python (`_ground_callback`): the rows of the
    input relations, and an exception raised in a call (raised again after grounding)."""

    def __init__(self, fact_terms: dict[str, str]):
        self.fact_terms = fact_terms
        self.error: BaseException | None = None


def _check(ok: bool) -> bool:
    """True, or raise clingo's error message."""
    if not ok:
        _handle_error(ok)
    return True


def _ground_callback(_location, name, arguments, size, data, symbol_callback, symbol_data) -> bool:
    """clingo's callback for `@name(...)` during grounding, with `data` a handle of the
    `_Grounding`. `@input("rel")` gives a relation's rows: clingo parses the rows' text and
    gets the parsed tuple's argument array. `@cat`, `@size` and `@nth` are answered on
    clingo's C symbols (`_BUILTINS`). No other function is defined."""
    grounding = _ffi.from_handle(data)
    function = _ffi.string(name)
    if function == b"input":
        text = _ffi.new("char const **")
        _check(_lib.clingo_symbol_string(arguments[0], text))
        rows = grounding.fact_terms.get(_ffi.string(text[0]).decode(), "()")
        term, items, count = _ffi.new("clingo_symbol_t*"), _ffi.new("clingo_symbol_t const **"), _ffi.new("size_t*")
        _check(_lib.clingo_parse_term(rows.encode(), _ffi.NULL, _ffi.NULL, 20, term)
               and _lib.clingo_symbol_arguments(term[0], items, count))
        return symbol_callback(items[0], count[0], symbol_data)
    builtin = _BUILTINS.get(function)
    if builtin is None:
        raise NameError(f"the programs call @{function.decode()}, which Adopter does not define")
    out = _ffi.new("clingo_symbol_t[1]")
    builtin(arguments, size, out)
    return symbol_callback(out, 1, symbol_data)


# (out-parameters made once: a call fills them and reads them back before the next one)
_TEXT, _SIZE, _ITEMS, _INT = ((_ffi.new("char const **"), _ffi.new("size_t*"), _ffi.new("clingo_symbol_t const **"),
                               _ffi.new("int*")) if _ffi is not None else (None,) * 4)


def _symbol_text(symbol) -> bytes:
    """What `cat` makes of one argument: a string's own text, else the symbol as clingo prints it."""
    if _lib.clingo_symbol_type(symbol) == _lib.clingo_symbol_type_string:
        _check(_lib.clingo_symbol_string(symbol, _TEXT))
        return _ffi.string(_TEXT[0])
    _check(_lib.clingo_symbol_to_string_size(symbol, _SIZE))
    buffer = _ffi.new("char[]", _SIZE[0])
    _check(_lib.clingo_symbol_to_string(symbol, buffer, _SIZE[0]))
    return _ffi.string(buffer)


def _cat(arguments, size: int, out) -> None:
    _check(_lib.clingo_symbol_create_string(b"".join([_symbol_text(arguments[i]) for i in range(size)]), out))


def _size(arguments, _size: int, out) -> None:
    _check(_lib.clingo_symbol_arguments(arguments[0], _ITEMS, _SIZE))
    _lib.clingo_symbol_create_number(_SIZE[0], out)


def _nth(arguments, _size: int, out) -> None:
    _check(_lib.clingo_symbol_arguments(arguments[0], _ITEMS, _SIZE) and _lib.clingo_symbol_number(arguments[1], _INT))
    if not 0 <= _INT[0] < _SIZE[0]:
        raise IndexError(f"@nth: index {_INT[0]} of a term with {_SIZE[0]} arguments")
    out[0] = _ITEMS[0][_INT[0]]


_BUILTINS: dict[bytes, Callable] = {b"cat": _cat, b"size": _size, b"nth": _nth}


def _callback_error(_exception, value, traceback) -> bool:
    """An exception in `_ground_callback`: kept with its `_Grounding` (raised again after
    grounding), and clingo told to stop."""
    if traceback is not None:
        _ffi.from_handle(traceback.tb_frame.f_locals["data"]).error = value
    _lib.clingo_set_error(_lib.clingo_error_unknown, str(value).encode())
    return False


_GROUND_CALLBACK = _ffi.callback("clingo_ground_callback_t", _ground_callback, onerror=_callback_error) \
    if available() else None


class NativeClingo:
    """Grounding and reading atoms through clingo's C functions; rows are tuples of symbol ids."""

    name = "native"

    @staticmethod
    def ground(control: clingo.Control, parts: Sequence[tuple[str, Sequence[clingo.Symbol]]],
               fact_terms: dict[str, str], messages: list[str]) -> None:
        grounding = _Grounding(fact_terms)
        data, names = _ffi.new_handle(grounding), []  # (kept alive through the call)
        c_parts = _ffi.new("clingo_part_t[]", len(parts))
        for (name, params), c_part in zip(parts, c_parts):
            names.append((_ffi.new("char[]", name.encode()), _ffi.new("clingo_symbol_t[]", [p._rep for p in params])))
            c_part.name, c_part.params, c_part.size = names[-1][0], names[-1][1], len(params)
        if not _lib.clingo_control_ground(control._rep, c_parts, len(parts), _GROUND_CALLBACK, data):
            if grounding.error is not None:
                raise grounding.error
            raise RuntimeError(messages[0].strip() if messages else _ffi.string(_lib.clingo_error_message()).decode())

    @staticmethod
    def atom_rows(control: clingo.Control, name: str, arity: int) -> list[tuple[int, ...]]:
        """The argument ids of every atom `name/arity` of a ground program. (The loop keeps to
        local names: per atom, looking each function up on the library is a sizeable part.)"""
        atoms = control.symbolic_atoms._rep
        signature = _ffi.new("clingo_signature_t*")
        it, end = _ffi.new("clingo_symbolic_atom_iterator_t*"), _ffi.new("clingo_symbolic_atom_iterator_t*")
        done, fact = _ffi.new("bool*"), _ffi.new("bool*")
        symbol, arguments, size = _ffi.new("clingo_symbol_t*"), _ffi.new("clingo_symbol_t**"), _ffi.new("size_t*")
        _check(_lib.clingo_signature_create(name.encode(), arity, True, signature)
               and _lib.clingo_symbolic_atoms_begin(atoms, signature, it) and _lib.clingo_symbolic_atoms_end(atoms, end))
        at_end, is_fact, symbol_of = (_lib.clingo_symbolic_atoms_iterator_is_equal_to, _lib.clingo_symbolic_atoms_is_fact,
                                      _lib.clingo_symbolic_atoms_symbol)
        arguments_of, advance, last = _lib.clingo_symbol_arguments, _lib.clingo_symbolic_atoms_next, end[0]
        rows = []
        append = rows.append
        atom = it[0]
        while at_end(atoms, atom, last, done) or _check(False):
            if done[0]:
                return rows
            if not (is_fact(atoms, atom, fact) and symbol_of(atoms, atom, symbol)
                    and arguments_of(symbol[0], arguments, size) and advance(atoms, atom, it)):
                _check(False)
            if not fact[0]:  # only a non-stratified program leaves atoms undecided
                raise RuntimeError(f"{name}/{arity} is not decided by grounding: is the program stratified?")
            append(tuple(arguments[0][0:size[0]]))
            atom = it[0]
        return rows

    @staticmethod
    def symbol(value) -> clingo.Symbol:
        """The `clingo.Symbol` of a row's value (an id)."""
        return clingo.Symbol(value)

    @staticmethod
    def value(symbol: clingo.Symbol):
        """What a row holds for `symbol` (its id)."""
        return symbol._rep
