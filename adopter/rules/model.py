"""What a parsed rule is: plain dataclasses, without the parser, so that rules loaded from
the cache (adopter/rules/registry.py) need no lark at all, whose import would slow every
`adopter` start."""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace


@dataclass(frozen=True)
class Arg:
    """A pattern input: a `$variable`, a constant (its Python repr) or source text."""

    var: str | None = None
    const: str | None = None
    code: str | None = None
    # a part of the last dimension of $x, or None for the whole value: ("half", 0 or 1), `$x[:half]` /
    # `$x[half:]`; ("parity", 0 or 1), `$x[::2]` / `$x[1::2]`, the even / odd items; ("item", 0 or 1),
    # `$x[..., 0]` / `$x[..., 1]`
    part: tuple[str, int] | None = None
    # `~$x`: the value of $x, or one computed from it by element-wise steps (a forward source only)
    reached: bool = False


@dataclass(frozen=True)
class Input:
    position: int | str  # index among positional inputs, or a keyword
    arg: Arg
    negated: bool = False  # `kw!=value`: the call must not pass `kw=value`
    line: int = 0  # where the argument (`$x`, `-1`, ...) is written
    col: int = 0
    element: int | None = None  # an element of a tuple literal passed at `position` (`torch.cat(($a, $b))`)


@dataclass(frozen=True)
class PatternNode:
    kind: str  # "layer" (a call), "binary", "unary" or "wildcard"
    callee: str | None = None  # a qualified type, or a `$variable` bound by the init part
    op: str | None = None
    inputs: tuple[Input, ...] = ()
    output: str | None = None
    line: int = 0
    col: int = 0
    output_line: int = 0  # where the output `$variable` is written
    output_col: int = 0
    ordered: bool = True  # written after `;` (or first): runs after the node before it; after `&`, in any order
    wrapped: bool = False  # `~T()`: a T, or a module wrapping one (its forward returns the T's output, adjusted element-wise)

    @property
    def callees(self) -> tuple[str, ...]:
        """The types a call node may have: one, or the alternatives written `a|b`."""
        return tuple(self.callee.split("|")) if self.callee else ()


@dataclass
class Rule:
    id: str
    path: str
    # one of several files of one rule (`<id>.<shape>.adopt`): another code shape of the same
    # transformation, with its own patterns and target; reported under the rule's id
    shape: str = ""
    anchor: str = "forward"  # which part's first node gives the location's line
    kernel: str = "paper"
    guards: str = "feasible"  # "feasible": nodes can share a path; "equal": nodes run under the same guards
    # where a rewrite may edit (matches are found in both): "methods", forward and its
    # self-helpers; "functions", also the module-level functions they call (code other callers share)
    scope: str = "methods"
    fallback: str = "none"  # "eager": the rewrite keeps the original under `if <the paths where the match fails>:`
    # "allowed": reads of an inner value's metadata (`x.size()`, `x.shape`, ...) outside the match do not break it
    metadata: str = "breaks"
    # "allowed": a value the match computes may be read outside it (found, not rewritten: a
    # detection whose fusion would need the value, such as the logits a model returns)
    reads: str = "breaks"
    extern: tuple[str, ...] = ()  # `extern:` names: qualified names the catalogue (adopter/catalogue/) lacks
    init_source: list[PatternNode] = field(default_factory=list)
    init_target: list[PatternNode] = field(default_factory=list)
    forward_source: list[PatternNode] = field(default_factory=list)
    forward_target: list[PatternNode] = field(default_factory=list)
    doc: str = ""

    @property
    def key(self) -> str:
        """What names this file's patterns (its compiled program, a match's rewrite): the id, or
        `<id>.<shape>` for a further shape."""
        return f"{self.id}.{self.shape}" if self.shape else self.id

    @property
    def kept_nodes(self) -> list[int]:
        """Forward nodes a rewrite leaves as they are: the pattern reads their output only through
        parts the code takes of it (`$p[:half]`, swiglu's chunked shape; `$p[..., 0]`), which the
        target passes on or a detect-only rule leaves alone."""
        whole = {item.arg.var for node in self.forward_source for item in node.inputs if item.arg.part is None}
        return [i for i, node in enumerate(self.forward_source[:-1]) if node.output not in whole]

    @property
    def detect_only(self) -> bool:
        return not self.forward_target and not self.init_target


def oriented(rule: Rule, swapped: list[int]) -> Rule:
    """The rule as one match read it: the binary forward nodes at `swapped` (pattern indices)
    matched their operands the other way round (`residual + dropout(x)` for `$a + $residual`)."""
    if not swapped:
        return rule
    flip = {0: 1, 1: 0}
    forward = [replace(node, inputs=tuple(replace(item, position=flip[item.position]) for item in node.inputs))
               if i in swapped else node for i, node in enumerate(rule.forward_source)]
    return replace(rule, forward_source=forward)


# the labels a rule's header opens its fields with (docs/dsl.md)
_FIELD = re.compile(r"^(What it does:|Why is this bad\?|Example:|Use instead:|Fix safety:|Known limits:|Other shapes:|"
                    r"Extern:|Source:)", re.MULTILINE)
_SENTENCE_END = re.compile(r"[.!?](?=\s|$)")


def what_it_does(doc: str) -> str:
    """The first sentence of a rule header's "What it does" field, on one line."""
    fields = _FIELD.split(doc or "")
    text = next((fields[i + 1] for i in range(1, len(fields) - 1, 2) if fields[i] == "What it does:"), "")
    text = " ".join(text.split())
    end = _SENTENCE_END.search(text)
    return text[:end.end()] if end else text
