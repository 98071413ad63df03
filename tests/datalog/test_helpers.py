"""adopter/datalog/flow/contexts.lp: `self.helper(...)` calls bring the helper's nodes into the caller."""

from conftest import facts_of, relation, structures_of

CODE = """
import torch
from torch import nn
class Attn(nn.Module):
    def __init__(self):
        self.q = nn.Linear(4, 4)
        self.k = nn.Linear(4, 4)
    def split(self, t):
        return t.view(2, 2)
    def scores(self, a, b):
        return torch.matmul(a, b)
    def forward(self, x):
        q = self.split(self.q(x))
        k = self.split(t=self.k(x))
        return self.scores(q, k)
"""


def test_helper_nodes_appear_in_the_callers_structure_with_bound_arguments():
    assert structures_of(CODE, "Attn") == [
        "torch.nn.Linear(x) -> t1; torch.Tensor.view(t1, 2, 2) -> q; "
        "torch.nn.Linear(x) -> t2; torch.Tensor.view(t2, 2, 2) -> k; torch.matmul(q, k) -> t3"]


def test_inherited_helpers_are_inlined_and_recursion_is_bounded():
    code = """
    import torch
    class Base:
        def helper(self, x):
            return self.helper(torch.relu(x))
    class Child(Base):
        def forward(self, x):
            return self.helper(x)
    """
    (structure,) = structures_of(code, "Child")
    assert structure.count("torch.relu") == 3  # depth bound: max_inline_depth


NESTED = """
import torch
from torch import nn
def shape(t):
    return torch.relu(t)
class Attn(nn.Module):
    def __init__(self):
        self.q = nn.Linear(4, 4)
        self.heads = 2
    def forward(self, x):
        batch = x.size(0)
        def shape(states):
            return states.view(batch, self.heads, -1).transpose(1, 2)
        q = shape(self.q(x))
        return torch.softmax(q, dim=-1)
    def other(self, x):
        return shape(x)
"""


def test_a_function_defined_inside_a_method_runs_where_it_is_called_with_its_argument_bound():
    assert structures_of(NESTED, "Attn") == [
        "torch.Tensor.size(x, 0) -> batch; torch.nn.Linear(x) -> t1; torch.Tensor.view(t1, batch, self.heads, -1) -> t2; "
        "torch.Tensor.transpose(t2, 1, 2) -> q; torch.softmax(q, dim=-1) -> t3"]


def test_a_nested_def_binds_its_name_only_inside_the_function_that_defines_it():
    # `other` calls the module-level `shape` (relu); forward's `shape` is a local of forward
    assert structures_of(NESTED, "Attn", "other") == ["torch.relu(x) -> t1"]
    assert ("Attn.forward.<locals>.shape",) not in {(q,) for (_, q) in relation(NESTED, "module_function")}


def test_a_nested_function_reads_the_variables_of_the_function_around_it():
    uses = relation(NESTED, "free_read")
    assert {v for (_, v, _) in uses} == {"batch", "self"}


def test_a_subclass_gets_a_root_for_an_inherited_forward_only_when_it_builds_a_layer_forward_reads():
    code = """
    from torch import nn
    class Base(nn.Module):
        def __init__(self):
            self.proj = nn.Linear(4, 4)
        def forward(self, x):
            return self.proj(x)
    class Renamed(Base):
        def __init__(self):
            super().__init__()
            self.note = "no layer forward reads"
    class Wider(Base):
        def __init__(self):
            super().__init__()
            self.proj = nn.Linear(4, 8)
    """
    classes = {name: cid for cid, name, *_ in facts_of(code).rows["class_def"]}
    assert {c for c, _f in relation(code, "inherited_root")} == {str(classes["Wider"])}
    # its structure is its own root's: a Linear of its own (8 features), where Base's is another
    assert structures_of(code, "Wider") == structures_of(code, "Base") == ["torch.nn.Linear(x) -> t1"]
    assert relation(code, "forward_root") >= {(f"u({f},{classes['Wider']})",) for _c, f in relation(code, "inherited_root")}


def test_an_attention_processor_runs_with_the_module_as_its_first_argument():
    """contexts.lp call_class/3: `self.processor(self, x)` runs the `__call__` of the in-file class
    `_default_processor_cls` names (inherited from an in-file base too), with `attn` the module:
    `attn.to_q` is its layer, and `self` inside `__call__` is the processor, not the module."""
    code = """
    from torch import nn
    class Processor:
        scale = None
        def __call__(self, attn, hidden_states, mask=None):
            q = attn.to_q(hidden_states)
            return self.post(attn.to_out(q))
    class Base(nn.Module):
        _default_processor_cls = Processor
    class Attention(Base):
        def __init__(self, processor=None):
            self.to_q = nn.Linear(4, 4)
            self.to_out = nn.Linear(4, 4)
            self.post = nn.ReLU()
            self.set_processor(processor or self._default_processor_cls())
        def forward(self, x):
            return self.processor(self, x)
    class Unrelated(nn.Module):
        def forward(self, x):
            return self.processor(self, x)
    """
    assert structures_of(code, "Attention") == ["torch.nn.Linear(x) -> q; torch.nn.Linear(q) -> t1"]
    assert structures_of(code, "Unrelated") == [""]  # no processor class: nothing runs


def test_a_method_of_an_in_file_object_runs_on_that_object_and_returns_its_tuple_items():
    """contexts.lp call_class/3: `self.generator.generate(x)` runs `generate` of the in-file class
    the attribute holds (built under `if`, from a parameter's default), with `self` that object;
    `logits, hidden = self.forward(x)` there takes each item of the tuple forward returns
    (flow/nodes.lp returned_item/4), so `logits` holds the Linear's output."""
    code = """
    import torch
    from torch import nn
    class Generator(nn.Module):
        def __init__(self):
            self.net = nn.GRU(4, 4)
            self.to_logits = nn.Linear(4, 4)
        def forward(self, x):
            embed, hidden = self.net(x)
            return self.to_logits(embed), hidden
        def generate(self, x):
            logits, hidden = self.forward(x)
            return logits.softmax(dim=-1)
    class Wrapper(nn.Module):
        def __init__(self, generator=None):
            if generator is None:
                generator = Generator()
            self.generator = generator
        def forward(self, x):
            return self.generator.generate(x)
    """
    # (`logits.softmax` is a node only where `logits` is known to hold a tensor: the Linear's output)
    assert structures_of(code, "Wrapper") == [
        "torch.nn.GRU(x) -> t1; torch.nn.Linear(embed) -> t2; torch.Tensor.softmax(logits, dim=-1) -> t3"]
    # (item 0 of forward's tuple, in generate's own root and where Wrapper's forward runs it;
    # item 1, the GRU's unpacked `hidden`, holds no node's whole output)
    assert {item for _ctx, _call, item, _node in relation(code, "returned_item")} == {"0"}
    assert len(relation(code, "returned_item")) == 2


def test_an_attribute_holding_a_bound_method_runs_that_method():
    """contexts.lp bound_method/3: `self.attn = self.dense_attn`, or one entry of a dict of
    `(method, mode)` tuples built in `__init__` and unpacked into two attributes (jukebox's
    `ATTENTION_MAP`), makes `self.attn(...)` run the method (any of them), its argument bound."""
    code = """
    import torch
    from torch import nn
    class Attention(nn.Module):
        def __init__(self, kind):
            attention_map = {"dense": (self.dense_attn, "auto"), "block": (self.block_attn, None)}
            self.attn, self.attn_mode = attention_map[kind]
            self.direct = self.dense_attn
            self.proj = nn.Linear(4, 4)
        def dense_attn(self, x):
            return torch.softmax(x, -1)
        def block_attn(self, x):
            return torch.relu(x)
        def forward(self, x):
            return self.attn(self.proj(x))
    class Direct(Attention):
        def forward(self, x):
            return self.direct(x)
    class NotAMethod(Attention):
        def forward(self, x):
            return self.attn_mode(x)
    """
    # (the call of the attribute stays a node of unknown type; both methods run below it)
    assert structures_of(code, "Attention") == [
        "torch.nn.Linear(x) -> t1; ?(t1) -> t2; torch.softmax(t1, -1) -> t3; torch.relu(t1) -> t4"]
    assert "torch.softmax(x, -1)" in structures_of(code, "Direct")[0]
    assert "torch.softmax" not in structures_of(code, "NotAMethod")[0]


# methods that call each other, none of them `forward`: three deep, they would open contexts
# exponentially (numpy/f2py/symbolic.py: 19,888 contexts three deep)
MUTUAL = """
class Expr:
    def a(self):
        return self.b() + self.c()
    def b(self):
        return self.c() + self.a()
    def c(self):
        return self.a() + self.b()
class M(nn.Module):
    def forward(self, x):
        return self.f(x)
    def f(self, x):
        return self.g(x)
    def g(self, x):
        return self.h(x)
    def h(self, x):
        return self.drop(x)
"""


def test_helper_contexts_go_three_deep_below_forward_and_one_deep_below_other_methods():
    depths: dict[int, int] = {}
    for _context, _function, depth in relation(MUTUAL, "ctx"):
        depths[int(depth)] = depths.get(int(depth), 0) + 1
    # depth 0: the 7 methods; depth 1: a, b and c open two each, forward opens f, f opens g,
    # g opens h (each method a root of its own); below forward only: f -> g, then g -> h
    assert depths == {0: 7, 1: 6 + 3, 2: 1, 3: 1}


def test_a_static_method_called_through_its_class_runs_with_its_parameters_from_0():
    code = """
    import torch
    from torch import nn
    class Rope(nn.Module):
        @staticmethod
        def rotate(x, k):
            return torch.roll(x, k)
        def forward(self, q):
            return Rope.rotate(q, 2) + self.rotate(q, 3)
    """
    assert structures_of(code, "Rope") == ["torch.roll(q, 2) -> t1; torch.roll(q, 3) -> t2; … + … -> t3"]


def test_a_subclass_overriding_a_method_its_base_forward_calls_runs_its_own():
    code = """
    import torch
    from torch import nn
    class Base(nn.Module):
        def forward(self, q):
            return self.apply(q)
        def apply(self, q):
            return q
    class Sub(Base):
        def apply(self, q):
            return torch.tanh(q)
    """
    assert structures_of(code, "Sub") == ["torch.tanh(q) -> t1"]
