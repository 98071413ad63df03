"""adopter/datalog/types/layers.lp: what `self.x` is, through branches, aliases, inheritance, containers."""

from conftest import relation, structures_of


def test_init_branches_give_every_possible_type():
    code = """
    from torch import nn
    class M(nn.Module):
        def __init__(self, config):
            if config.norm == "batch":
                self.norm = nn.BatchNorm1d(4)
            else:
                self.norm = nn.LayerNorm(4)
        def forward(self, x):
            return self.norm(x)
    """
    from conftest import facts_of
    from adopter.datalog.engine import solve
    model = solve(facts_of(code), keep={"node_type"})
    types = {t.string for _, t in model.get("node_type")}
    assert types == {"torch.nn.BatchNorm1d", "torch.nn.LayerNorm"}


def test_plain_alias_in_init_and_in_forward():
    code = """
    from torch import nn
    class M(nn.Module):
        def __init__(self):
            layer = nn.Linear(2, 2)
            self.proj = layer
        def forward(self, x):
            proj = self.proj
            return proj(x)
    """
    assert structures_of(code, "M") == ["torch.nn.Linear(x) -> t1"]


def test_an_attribute_made_another_name_of_a_layer_has_its_type():
    code = """
    from torch import nn
    class M(nn.Module):
        def __init__(self):
            self.LayerNorm = nn.LayerNorm(4)
            self.norm = self.LayerNorm
            self.again = self.norm
        def forward(self, x):
            return self.again(self.norm(x))
    """
    assert structures_of(code, "M") == ["torch.nn.LayerNorm(x) -> t1; torch.nn.LayerNorm(t1) -> t2"]


def test_attributes_are_inherited_from_in_file_base_classes():
    code = """
    from torch import nn
    class Base(nn.Module):
        def __init__(self):
            self.drop = nn.Dropout(0.1)
    class Child(Base):
        def forward(self, x):
            return self.drop(x)
    """
    assert structures_of(code, "Child") == ["torch.nn.Dropout(x) -> t1"]


def test_sequential_is_applied_in_order():
    code = """
    from torch import nn
    class M(nn.Module):
        def __init__(self):
            self.mlp = nn.Sequential(nn.Linear(2, 4), nn.BatchNorm1d(4), nn.ReLU())
        def forward(self, x):
            y = self.mlp(x)
            return y
    """
    assert structures_of(code, "M") == [
        "torch.nn.Linear(x) -> t1; torch.nn.BatchNorm1d(t1) -> t2; torch.nn.ReLU(t2) -> y"]


def test_a_sequential_subclass_filled_by_add_module_is_applied_in_call_order():
    code = """
    from torch import nn
    class ConvBN(nn.Sequential):
        def __init__(self, c, with_bn=True):
            super().__init__()
            self.add_module("conv", nn.Conv2d(c, c, 3))
            if with_bn:
                self.add_module("bn", nn.BatchNorm2d(c))
    class Deeper(ConvBN):
        pass
    class M(nn.Module):
        def __init__(self):
            self.a = ConvBN(4)
            self.b = Deeper(4)
            self.c = nn.Module()
        def forward(self, x):
            x = self.a(x)
            x = self.b(x)
            return self.c(x)
    """
    assert structures_of(code, "M") == [
        "torch.nn.Conv2d(x) -> t1; torch.nn.BatchNorm2d(t1) -> x; torch.nn.Conv2d(x) -> t2; "
        "torch.nn.BatchNorm2d(t2) -> x; torch.nn.Module(x) -> t3"]


def test_modulelist_elements_are_typed_in_for_loops_and_by_index():
    code = """
    from torch import nn
    class M(nn.Module):
        def __init__(self, n):
            self.layers = nn.ModuleList([nn.Linear(2, 2) for _ in range(n)])
            self.convs = nn.ModuleList()
            self.convs.append(nn.Conv2d(1, 1, 1))
        def forward(self, x):
            for i, layer in enumerate(self.layers):
                x = layer(x)
            for conv in self.convs:
                x = conv(x)
            return self.layers[0](x)
    """
    assert structures_of(code, "M") == [
        "torch.nn.Linear(x) -> x; torch.nn.Conv2d(x) -> x; torch.nn.Linear(x) -> t1"]


def test_activation_table_lookup_has_the_table_type():
    code = """
    from torch import nn
    from transformers.activations import ACT2FN
    class M(nn.Module):
        def __init__(self, config):
            if isinstance(config.hidden_act, str):
                self.act = ACT2FN[config.hidden_act]
            else:
                self.act = config.hidden_act
        def forward(self, x):
            return self.act(x)
    """
    assert structures_of(code, "M") == ["transformers.activations.ACT2FN(x) -> t1"]


def _node_types(code: str) -> set[str]:
    from conftest import facts_of
    from adopter.datalog.engine import solve
    return {t.string for _, t in solve(facts_of(code), keep={"node_type"}).get("node_type")}


CHOSEN = """
from torch import nn
CLASSES = {"batch": nn.BatchNorm1d, "layer": nn.LayerNorm}
class M(nn.Module):
    def __init__(self, config):
        %s
    def forward(self, x):
        return self.norm(x)
"""


def test_a_class_chosen_at_run_time_has_every_type_it_may_be():
    """types/layers.lp chosen/2, one row per way of choosing: the layer's may-types."""
    table = [
        ("self.norm = CLASSES[config.norm](4)", {"torch.nn.BatchNorm1d", "torch.nn.LayerNorm"}),
        ("cls = nn.GroupNorm if config.group else nn.LayerNorm\n        self.norm = cls(4)",
         {"torch.nn.GroupNorm", "torch.nn.LayerNorm"}),
        ("self.norm = CLASSES.get(config.norm, nn.Identity)(4)",
         {"torch.nn.BatchNorm1d", "torch.nn.LayerNorm", "torch.nn.Identity"}),
        ("cls = CLASSES.get_interface(config.norm, nn.Identity)\n        self.norm = cls(4)", {"torch.nn.Identity"}),
        ("CLASSES = {}\n        self.norm = CLASSES[config.norm](4)", set()),  # a local dict shadows the module's
    ]
    for assignment, types in table:
        assert _node_types(CHOSEN % assignment) == types, assignment


def test_a_class_passed_as_a_parameter_may_be_its_default():
    """chosen/2 through param_default/3: `norm_layer=nn.BatchNorm2d`, unless reassigned first."""
    template = """
    from torch import nn
    class M(nn.Module):
        def __init__(self, c, norm_layer=nn.BatchNorm2d, *, act=nn.ReLU):
            %s
        def forward(self, x):
            return self.norm(x)
    """
    table = [
        ("self.norm = norm_layer(c)", {"torch.nn.BatchNorm2d"}),
        ("self.norm = act()", {"torch.nn.ReLU"}),
        ("self.norm = norm_layer(c) if norm_layer is not None else nn.Identity()", {"torch.nn.BatchNorm2d", "torch.nn.Identity"}),
        ("norm_layer = nn.LayerNorm\n            self.norm = norm_layer(c)", {"torch.nn.LayerNorm"}),
        ("self.norm = c(4)", set()),  # no default
    ]
    for assignment, types in table:
        assert _node_types(template % assignment) == types, assignment


def test_a_module_built_and_returned_by_a_builder_has_the_built_type():
    """types/layers.lp returned/2: a method or module-level function of the file that returns a module."""
    code = """
    from collections import OrderedDict
    from torch import nn
    def conv_bn(c):
        return nn.Sequential(nn.Conv2d(c, c, 3), nn.BatchNorm2d(c))
    class M(nn.Module):
        def __init__(self, c):
            self.stem = conv_bn(c)
            self.head = self._make_head(c)
            self.down, self.final = self._make_pair(c)
        def _make_head(self, c):
            layer = nn.Linear(c, c)
            return layer
        def _make_pair(self, c):
            down = nn.Conv2d(c, c, 1)
            return down, nn.ReLU()
        def forward(self, x):
            x = self.stem(x)
            x = self.down(x)
            x = self.final(x)
            return self.head(x)
    """
    assert structures_of(code, "M") == [
        "torch.nn.Conv2d(x) -> t1; torch.nn.BatchNorm2d(t1) -> x; torch.nn.Conv2d(x) -> x; torch.nn.ReLU(x) -> x; "
        "torch.nn.Linear(x) -> t2"]


def test_a_sequential_of_an_ordered_dict_is_applied_in_order():
    code = """
    from collections import OrderedDict
    from torch import nn
    class M(nn.Module):
        def __init__(self, c, deep):
            if deep:
                modules = [("conv1", nn.Conv2d(c, c, 3)), ("bn1", nn.BatchNorm2d(c)), ("conv2", nn.Conv2d(c, c, 3))]
            else:
                modules = [("conv1", nn.Conv2d(c, c, 7)), ("bn1", nn.BatchNorm2d(c))]
            self.layer0 = nn.Sequential(OrderedDict(modules))
        def forward(self, x):
            return self.layer0(x)
    """
    assert structures_of(code, "M") == [
        "torch.nn.Conv2d(x) -> t1; torch.nn.BatchNorm2d(t1) -> t2; torch.nn.Conv2d(t2) -> t3"]


def test_a_sequential_subclass_filled_by_attribute_assignment_is_applied_in_order():
    """Assigning `self.conv = ...` registers a module as `add_module` does; a subclass with its
    own forward runs that forward instead (its layers are no Sequential's)."""
    code = """
    from torch import nn
    class ConvNorm(nn.Sequential):
        def __init__(self, c):
            super().__init__()
            self.conv = nn.Conv2d(c, c, 3)
            self.bn = nn.BatchNorm2d(c)
    class Custom(nn.Sequential):
        def __init__(self, c):
            super().__init__()
            self.conv = nn.Conv2d(c, c, 3)
        def forward(self, x):
            return x
    class M(nn.Module):
        def __init__(self):
            self.a = ConvNorm(4)
            self.b = Custom(4)
        def forward(self, x):
            x = self.a(x)
            return self.b(x)
    """
    assert structures_of(code, "M") == [
        "torch.nn.Conv2d(x) -> t1; torch.nn.BatchNorm2d(t1) -> x; snippet.Custom(x) -> t2"]


def test_local_lists_filled_by_append_or_extend_give_container_elements():
    code = """
    from torch import nn
    class M(nn.Module):
        def __init__(self, n):
            fuse = []
            for i in range(n):
                inner = []
                inner.append(nn.Sequential(nn.Conv2d(4, 4, 1), nn.BatchNorm2d(4)))
                fuse.append(nn.ModuleList(inner))
            self.fuse = nn.ModuleList(fuse)
            heads = []
            heads.extend([nn.Linear(4, 4), nn.Linear(4, 4)])
            self.heads = nn.ModuleList(heads)
        def forward(self, x):
            for i, outer in enumerate(self.fuse):
                for j, f in enumerate(outer):
                    x = f(x)
            down = self.heads[0]
            return down.forward(x)
    """
    assert structures_of(code, "M") == [
        "torch.nn.Conv2d(x) -> t1; torch.nn.BatchNorm2d(t1) -> x; torch.nn.Linear(x) -> t2"]


def forward_chunk_layers(code: str) -> dict[str, str]:
    """The layers of list chunks that `forward` runs, by node, with their types (the method
    that builds a Sequential runs its layers too, in a root of its own)."""
    forward = {root for (root,) in relation(code, "forward_root")}
    in_forward = {x for x, root in relation(code, "node_root") if root in forward}
    return {x: t for x, t in relation(code, "node_type") if x.startswith("c(") and x in in_forward}


def test_a_sequential_of_a_list_filled_in_a_loop_runs_each_call_s_items_in_a_row():
    """`nn.Sequential(*layers)` of a list filled by `append`/`extend` in a loop: where a call's
    items land among the others is not known, but they land together, so an `extend([a, b])`
    makes a and b neighbours, and an appended Sequential runs its own layers in order."""
    code = """
    from torch import nn
    class M(nn.Module):
        def __init__(self, n):
            convs = []
            for i in range(n):
                convs.append(nn.Sequential(nn.Conv2d(4, 4, 3), nn.BatchNorm2d(4)))
            self.down = nn.Sequential(*convs)
            mods = []
            for i in range(n):
                mods.extend([nn.Conv2d(4, 4, 3), nn.BatchNorm2d(4), nn.ReLU()])
            self.level = nn.Sequential(*mods)
        def forward(self, x):
            return self.level(self.down(x))
    """
    types = dict(relation(code, "value_type"))
    chunks: dict[str, list] = {}
    for _seq, call, index, item in relation(code, "list_chunk"):
        chunks.setdefault(call, []).append((int(index), types[item]))
    assert sorted(sorted(items) for items in chunks.values()) == [
        [(0, "torch.nn.Conv2d"), (1, "torch.nn.BatchNorm2d"), (2, "torch.nn.ReLU")], [(0, "torch.nn.Sequential")]]
    inputs = relation(code, "node_input_node")
    layers = forward_chunk_layers(code)
    # each chunk's layers follow one another; the first of a chunk has no known input
    assert sorted(layers.values()) == ["torch.nn.BatchNorm2d", "torch.nn.BatchNorm2d", "torch.nn.Conv2d",
                                       "torch.nn.Conv2d", "torch.nn.ReLU"]
    follows = {(layers[x], layers[y]) for x, _pos, y in inputs if x in layers}
    assert follows == {("torch.nn.BatchNorm2d", "torch.nn.Conv2d"), ("torch.nn.ReLU", "torch.nn.BatchNorm2d")}
    assert not any(x in layers for x, _pos, _ctx, _expr in relation(code, "node_input"))


def test_the_items_a_list_starts_with_are_a_chunk_of_its_sequential():
    code = """
    from torch import nn
    class M(nn.Module):
        def __init__(self, n):
            layers = [nn.Conv2d(4, 4, 3), nn.BatchNorm2d(4)]
            for i in range(n):
                layers.append(nn.ReLU())
            self.level = nn.Sequential(*layers)
        def forward(self, x):
            return self.level(x)
    """
    layers = forward_chunk_layers(code)
    follows = {(layers[x], layers[y]) for x, _pos, y in relation(code, "node_input_node") if x in layers}
    assert sorted(layers.values()) == ["torch.nn.BatchNorm2d", "torch.nn.Conv2d", "torch.nn.ReLU"]
    assert follows == {("torch.nn.BatchNorm2d", "torch.nn.Conv2d")}


def test_a_list_read_otherwise_than_filled_has_no_chunks():
    """`insert`, an item assignment or any other read of the list may put a layer between two
    of a call's items: its Sequential's layers are then not claimed at all."""
    for start, extra in (("[]", "layers.insert(1, nn.ReLU())"), ("[]", "layers[0] = nn.Identity()"), ("[]", "more = layers"),
                         ("[]", "self.count = len(layers)"), ("self.base", "pass")):
        # (a list that starts as another name's, `self.base`, may be changed through that name)
        code = f"""
        from torch import nn
        class M(nn.Module):
            def __init__(self, n):
                self.base = []
                layers = {start}
                for i in range(n):
                    layers.extend([nn.Conv2d(4, 4, 3), nn.BatchNorm2d(4)])
                {extra}
                self.level = nn.Sequential(*layers)
            def forward(self, x):
                return self.level(x)
        """
        assert relation(code, "list_chunk") == set(), (start, extra)


def test_loops_over_zip_and_enumerate_of_zip_type_each_name_by_its_iterable():
    code = """
    from torch import nn
    class M(nn.Module):
        def __init__(self):
            self.convs = nn.ModuleList([nn.Conv2d(4, 4, 3)])
            self.bns = nn.ModuleList([nn.BatchNorm2d(4)])
        def forward(self, x):
            for conv, bn in zip(self.convs, self.bns):
                x = bn(conv(x))
            for i, (conv, bn) in enumerate(zip(self.convs, self.bns)):
                x = conv(x)
                x = bn(x)
            return x
    """
    assert structures_of(code, "M") == [
        "torch.nn.Conv2d(x) -> t1; torch.nn.BatchNorm2d(t1) -> x; torch.nn.Conv2d(x) -> x; torch.nn.BatchNorm2d(x) -> x"]


def test_a_comprehension_loop_variable_is_an_element_of_its_iterable():
    code = """
    from torch import nn
    class M(nn.Module):
        def __init__(self):
            self.blocks = nn.ModuleList([nn.Sequential(nn.Conv2d(4, 4, 1), nn.BatchNorm2d(4))])
            self.heads = nn.ModuleList([nn.Linear(4, 4)])
        def forward(self, x):
            ys = [t(x) for i, t in enumerate(self.blocks)]
            return [h(x) for h in self.heads]
    """
    assert structures_of(code, "M") == [
        "torch.nn.Conv2d(x) -> t1; torch.nn.BatchNorm2d(t1) -> t2; torch.nn.Linear(x) -> t3"]


def test_a_list_filled_outside_loops_gives_each_item_its_place_counting_every_fill_before_it():
    """Fills outside loops run in their source order: an item's place counts the items of every
    fill before it, also one under an `if` (where it does not run, the next item moves up, and two
    items claimed neighbours are still neighbours whenever both are there). A fill after the
    Sequential is built is not one of its layers."""
    code = """
    from torch import nn
    class M(nn.Module):
        def __init__(self, norm, drop):
            layers = [nn.Conv2d(4, 4, 3)]
            if norm:
                layers.append(nn.BatchNorm2d(4))
            if drop:
                layers.extend([nn.Dropout(), nn.ReLU()])
            layers.append(nn.GELU())
            self.seq = nn.Sequential(*layers)
            layers.append(nn.Identity())
        def forward(self, x):
            return self.seq(x)
    """
    types = dict(relation(code, "value_type"))
    placed = sorted((int(position), types[layer]) for _seq, position, layer in relation(code, "list_layer"))
    assert placed == [(0, "torch.nn.Conv2d"), (1, "torch.nn.BatchNorm2d"), (2, "torch.nn.Dropout"), (3, "torch.nn.ReLU"),
                      (4, "torch.nn.GELU")]
    assert relation(code, "list_chunk") == set()


def test_a_list_extended_by_plus_equals_in_a_loop_is_filled_by_chunks():
    code = """
    from torch import nn
    def make_layers(cfg):
        layers = []
        for v in cfg:
            conv = nn.Conv2d(3, v, 3)
            layers += [conv, nn.BatchNorm2d(v), nn.ReLU()]
        return nn.Sequential(*layers)
    """
    types = dict(relation(code, "value_type"))
    chunks = sorted((int(index), types.get(item, item)) for _seq, _call, index, item in relation(code, "list_chunk"))
    assert [index for index, _ in chunks] == [0, 1, 2]
    assert [t for _, t in chunks][1:] == ["torch.nn.BatchNorm2d", "torch.nn.ReLU"]


def test_a_sequential_runs_its_layers_in_the_method_that_builds_it():
    """`downsample = nn.Sequential(...)` handed to another constructor: its layers are nodes of the
    building method's root (a sequential root), also in a module-level builder."""
    code = """
    from torch import nn
    class Net(nn.Module):
        def _make(self, block):
            downsample = nn.Sequential(nn.Conv2d(4, 4, 1), nn.BatchNorm2d(4))
            return block(downsample)
    def head():
        return nn.Sequential(nn.Linear(4, 4), nn.ReLU())
    """
    roots = {root for x, root in relation(code, "node_root") if x.startswith("s(")}
    assert len(roots) == 2
    layers = sorted(t for x, t in relation(code, "node_type") if x.startswith("s("))
    assert layers == ["torch.nn.BatchNorm2d", "torch.nn.Conv2d", "torch.nn.Linear", "torch.nn.ReLU"]
    follows = {x: y for x, _pos, y in relation(code, "node_input_node")}
    assert len(follows) == 2


def test_a_class_stored_on_self_builds_what_it_may_hold():
    """`norm_layer = self._norm_layer; norm_layer(c)`: any class a method stores in the attribute
    (torchvision's ResNet, from a parameter whose default is replaced under `if ... is None`)."""
    code = """
    from torch import nn
    class M(nn.Module):
        def __init__(self, norm_layer=None):
            if norm_layer is None:
                norm_layer = nn.BatchNorm2d
            self._norm_layer = norm_layer
            self.bn = self._build(4)
        def _build(self, c):
            norm_layer = self._norm_layer
            return norm_layer(c)
        def forward(self, x):
            return self.bn(x)
    """
    assert structures_of(code, "M") == ["torch.nn.BatchNorm2d(x) -> t1"]


def test_a_constructor_parameter_holds_what_an_in_file_construction_passes():
    """`GLU(dim, activation)` built by FeedForward with either activation: GLU's `self.act` may be
    either (by position, counting `self`, or by keyword); a class built nowhere in the file with
    the argument keeps its parameter unknown."""
    code = """
    from torch import nn
    class GLU(nn.Module):
        def __init__(self, dim, activation):
            self.act = activation
        def forward(self, x):
            return self.act(x)
    class Lone(nn.Module):
        def __init__(self, activation):
            self.act = activation
        def forward(self, x):
            return self.act(x)
    class FeedForward(nn.Module):
        def __init__(self, dim, swish):
            activation = nn.SiLU() if swish else nn.GELU()
            self.a = GLU(dim, activation)
            self.b = GLU(dim, activation=nn.ReLU())
        def forward(self, x):
            return self.b(self.a(x))
    """
    obj_types = {(obj, t) for obj, t in relation(code, "obj_type") if obj.startswith("attr(")}
    classes = {name: c for c, name, *_ in relation(code, "class_def")}
    assert {t for obj, t in obj_types if obj == f'attr({classes["GLU"]},"act")'} == {
        "torch.nn.SiLU", "torch.nn.GELU", "torch.nn.ReLU"}
    assert not [t for obj, t in obj_types if obj == f'attr({classes["Lone"]},"act")']


def test_a_sequential_subclass_whose_forward_threads_a_value_through_itself_keeps_its_layers_in_order():
    """`for mod in self: x = mod(x)` in the subclass's own forward runs the layers as Sequential's
    forward does (torchvision's ASPPPooling); a loop that gives each layer the same input does not."""
    code = """
    from torch import nn
    class Pooling(nn.Sequential):
        def __init__(self, c):
            super().__init__(nn.Conv2d(c, c, 1), nn.BatchNorm2d(c))
        def forward(self, x):
            for mod in self:
                x = mod(x)
            return x
    class Each(nn.Sequential):
        def __init__(self, c):
            super().__init__(nn.Conv2d(c, c, 1), nn.BatchNorm2d(c))
        def forward(self, x):
            return [mod(x) for mod in self]
    class Apart(nn.Sequential):
        def __init__(self, c):
            super().__init__(nn.Conv2d(c, c, 1), nn.BatchNorm2d(c))
        def forward(self, x):
            for mod in self:
                y = mod(x)
            return y
    """
    classes = {name: c for c, name, *_ in relation(code, "class_def")}
    assert {c for _call, c in relation(code, "super_init")} == {classes["Pooling"]}


def test_a_class_passed_down_builders_and_picked_from_a_list_builds_what_the_callers_pass():
    """torchvision's video ResNet: a module function passes `[Conv3DSimple] * 4` and a block class
    to a constructor, which passes an item of the list and the class to a method through self,
    which builds the block with it: the block's `conv_builder(...)` may be the list's class, an
    in-file subclass of nn.Conv3d that keeps its forward, so it is an nn.Conv3d too (not so a
    subclass with its own forward, nor a Sequential subclass: seq_class/1 holds its layers)."""
    code = """
    from torch import nn
    class Simple(nn.Conv3d):
        def __init__(self, a, b):
            super().__init__(a, b, 3)
    class Own(nn.Conv3d):
        def forward(self, x):
            return x
    class Block(nn.Module):
        def __init__(self, planes, conv_builder):
            self.conv = nn.Sequential(conv_builder(planes, planes), nn.BatchNorm3d(planes))
        def forward(self, x):
            return self.conv(x)
    class Net(nn.Module):
        def __init__(self, block, conv_makers):
            self.layer1 = self._make_layer(block, conv_makers[0], 4)
        def _make_layer(self, block, conv_builder, planes):
            return block(planes, conv_builder)
        @staticmethod
        def unused(block, conv_builder):
            return block(1, conv_builder)
        def forward(self, x):
            return self.layer1(x)
    def net():
        return Net(Block, [Simple] * 2 + [Own])
    """
    obj_types = {(obj, t) for obj, t in relation(code, "obj_type")}
    classes = {name: c for c, name, *_ in relation(code, "class_def")}
    # the first item of Block's Sequential: either class of the list; Simple also an nn.Conv3d
    assert {t for obj, t in obj_types if obj == f'seq(attr({classes["Block"]},"conv"),0)'} == {
        "snippet.Simple", "snippet.Own", "torch.nn.Conv3d"}
    # only Simple is a Conv3d: the Conv3d type comes from the subclass that keeps its forward
    simple_only = code.replace("[Simple] * 2 + [Own]", "[Own]")
    assert {t for obj, t in relation(simple_only, "obj_type") if obj == f'seq(attr({classes["Block"]},"conv"),0)'} == {"snippet.Own"}
