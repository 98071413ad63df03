"""Grounding with Adopter's `@functions` and reading atoms through clingo's public API: what
adopter/datalog/engine.py uses where clingo's C bindings (adopter/datalog/clingo_native.py) are
not there. Rows are tuples of `clingo.Symbol` objects; the atoms are the same."""

from __future__ import annotations

from typing import Sequence

import clingo


class _Functions:
    """The `@functions` the programs call: `@input("rel")` (a relation's rows, parsed by
    clingo from their text), `@cat`, `@size` and `@nth`."""

    def __init__(self, fact_terms: dict[str, str]):
        self.fact_terms = fact_terms

    def input(self, relation: clingo.Symbol) -> list[clingo.Symbol]:
        return clingo.parse_term(self.fact_terms.get(relation.string, "()")).arguments

    @staticmethod
    def cat(*arguments: clingo.Symbol) -> clingo.Symbol:
        return clingo.String("".join(a.string if a.type == clingo.SymbolType.String else str(a) for a in arguments))

    @staticmethod
    def size(term: clingo.Symbol) -> clingo.Symbol:
        return clingo.Number(len(term.arguments))

    @staticmethod
    def nth(term: clingo.Symbol, index: clingo.Symbol) -> clingo.Symbol:
        if not 0 <= index.number < len(term.arguments):
            raise IndexError(f"@nth: index {index.number} of a term with {len(term.arguments)} arguments")
        return term.arguments[index.number]

    def __getattr__(self, name: str):
        raise NameError(f"the programs call @{name}, which Adopter does not define")


class PublicClingo:
    """`ground` and `atom_rows` as clingo's public API does them; rows hold `clingo.Symbol`s."""

    name = "public"

    @staticmethod
    def ground(control: clingo.Control, parts: Sequence[tuple[str, Sequence[clingo.Symbol]]],
               fact_terms: dict[str, str], messages: list[str]) -> None:
        try:
            control.ground(list(parts), context=_Functions(fact_terms))
        except RuntimeError as error:
            if isinstance(error.__cause__ or error.__context__, (NameError, IndexError)):
                raise (error.__cause__ or error.__context__) from None
            raise RuntimeError(messages[0].strip() if messages else str(error)) from None

    @staticmethod
    def atom_rows(control: clingo.Control, name: str, arity: int) -> list[tuple[clingo.Symbol, ...]]:
        rows = []
        for atom in control.symbolic_atoms.by_signature(name, arity):
            if not atom.is_fact:  # only a non-stratified program leaves atoms undecided
                raise RuntimeError(f"{name}/{arity} is not decided by grounding: is the program stratified?")
            rows.append(tuple(atom.symbol.arguments))
        return rows

    @staticmethod
    def symbol(value: clingo.Symbol) -> clingo.Symbol:
        return value

    @staticmethod
    def value(symbol: clingo.Symbol) -> clingo.Symbol:
        return symbol
