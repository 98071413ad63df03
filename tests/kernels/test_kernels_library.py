"""adopter_kernels.gated_act (and gated_act_mul, gated_silu, silu_mul), apply_rotary, group_norm_silu (and group_norm_act) and the library kernels they may pick (kernels/adopter_kernels/library.py):
the run-time selection, and outputs and gradients equal to the original ops on the path that
runs. Needs torch (and transformers for its activation classes): `make test-verify`.

This machine has no GPU, so the library's own kernels (Liger-Kernel, Triton, CUDA) never run
here; a stand-in library function on CPU checks that the selection calls one where its
declared support holds, and only there."""

from __future__ import annotations

import importlib.util
import sys
import types
from dataclasses import replace

import pytest

torch = pytest.importorskip("torch")
from torch import nn  # noqa: E402
from torch.nn import functional as F  # noqa: E402

import adopter_kernels as kernels  # noqa: E402
from adopter_kernels import (apply_rotary, gated_act, gated_act_mul, gated_silu, group_norm_act,  # noqa: E402
                             group_norm_silu, silu_mul)
from adopter_kernels.library import GELU_TANH_MUL, GROUP_NORM, ROPE, SILU_MUL, LibraryKernel  # noqa: E402


def _activations():
    acts = {"nn.SiLU": nn.SiLU(), "nn.GELU": nn.GELU(), "nn.GELU(tanh)": nn.GELU(approximate="tanh"),
            "nn.ReLU": nn.ReLU(), "F.silu": F.silu}
    transformers = pytest.importorskip("transformers.activations")
    for key in ("silu", "swish", "gelu", "gelu_new", "gelu_pytorch_tanh", "relu"):
        acts[f"ACT2FN[{key!r}]"] = transformers.ACT2FN[key]
    return acts


ACTIVATIONS = _activations()


def _mlp(seed=0, bias=False):
    torch.manual_seed(seed)
    return nn.Linear(8, 16, bias=bias), nn.Linear(8, 16, bias=bias)


@pytest.mark.parametrize("name", sorted(ACTIVATIONS))
@pytest.mark.parametrize("bias", [False, True])
def test_gated_act_computes_the_original_ops_with_the_same_gradients(name, bias):
    act = ACTIVATIONS[name]
    gate, up = _mlp(bias=bias)
    x = torch.randn(2, 3, 8, requires_grad=True)
    expected = act(gate(x)) * up(x)
    grads_expected = torch.autograd.grad(expected.square().sum(), [x, gate.weight, up.weight])
    got = gated_act(gate, up, act, x)
    grads_got = torch.autograd.grad(got.square().sum(), [x, gate.weight, up.weight])
    # on CPU the fallback runs, which is the original ops: bit for bit
    assert torch.equal(got, expected)
    assert all(torch.equal(a, b) for a, b in zip(grads_got, grads_expected))


@pytest.mark.parametrize("name", sorted(ACTIVATIONS))
def test_gated_act_mul_on_the_halves_of_one_projection_computes_the_original_ops(name):
    act = ACTIVATIONS[name]
    proj, _ = _mlp()
    x = torch.randn(2, 3, 8, requires_grad=True)
    for gate_half in (0, 1):  # swiglu.chunk_gate_first / chunk_gate_last
        halves = proj(x).chunk(2, dim=-1)
        a, b = halves[gate_half], halves[1 - gate_half]
        expected = act(a) * b if gate_half == 0 else b * act(a)
        got = gated_act_mul(act, a, b)
        assert torch.equal(got, expected)
        grads = [torch.autograd.grad(y.square().sum(), [x, proj.weight], retain_graph=True) for y in (got, expected)]
        assert all(torch.equal(g1, g2) for g1, g2 in zip(*grads))


def test_the_silu_function_forms_compute_the_original_ops():
    gate, up = _mlp()
    x = torch.randn(2, 3, 8)
    assert torch.equal(gated_silu(gate, up, x), F.silu(gate(x)) * up(x))
    a, b = gate(x).chunk(2, dim=-1)
    assert torch.equal(silu_mul(b, a), a * F.silu(b))


def test_the_activations_a_library_kernel_covers():
    covered = {name: kernels._gated_kernel(act) for name, act in ACTIVATIONS.items()}
    assert {n for n, k in covered.items() if k is SILU_MUL} == {
        "nn.SiLU", "F.silu", "ACT2FN['silu']", "ACT2FN['swish']"}
    assert {n for n, k in covered.items() if k is GELU_TANH_MUL} == {"nn.GELU(tanh)", "ACT2FN['gelu_pytorch_tanh']"}
    # exact GELU (no library kernel), the hand-written tanh formula and a subclass run the original ops
    assert covered["nn.GELU"] is None and covered["ACT2FN['gelu_new']"] is None and covered["nn.ReLU"] is None
    assert kernels._gated_kernel(type("MySiLU", (nn.SiLU,), {})()) is None


def test_on_cpu_the_library_is_not_even_imported():
    a, b = torch.randn(4, 16), torch.randn(4, 16)
    fresh = replace(SILU_MUL)
    assert not fresh.supports(a, b)
    assert fresh._loaded == {}  # decided by the device before any import


@pytest.fixture
def stand_in(monkeypatch):
    """A library function on CPU (the real ones are Triton kernels for CUDA): it records its
    calls and computes silu(a) * b."""
    calls = []

    class SiLUMul(torch.autograd.Function):
        @staticmethod
        def forward(ctx, a, b):
            calls.append((a.shape, a.dtype))
            ctx.save_for_backward(a, b)
            return F.silu(a) * b

        @staticmethod
        def backward(ctx, grad):
            a, b = ctx.saved_tensors
            s = torch.sigmoid(a)
            return grad * b * (s + a * s * (1 - s)), grad * F.silu(a)

    module = types.ModuleType("stand_in_library")
    module.SiLUMul = SiLUMul
    monkeypatch.setitem(sys.modules, "stand_in_library", module)
    kernel = replace(SILU_MUL, module="stand_in_library", name="SiLUMul", devices=frozenset({"cpu"}))
    monkeypatch.setattr(kernels, "SILU_MUL", kernel)
    return kernel, calls


def test_the_library_kernel_runs_where_its_declared_support_holds(stand_in):
    kernel, calls = stand_in
    gate, up = _mlp()
    x = torch.randn(2, 3, 8, requires_grad=True)
    expected = nn.SiLU()(gate(x)) * up(x)
    got = gated_act(gate, up, nn.SiLU(), x)
    assert calls == [(torch.Size([2, 3, 16]), torch.float32)]
    assert torch.allclose(got, expected, rtol=1e-6, atol=1e-7)
    grads = [torch.autograd.grad(y.sum(), [x, gate.weight, up.weight], retain_graph=True) for y in (got, expected)]
    assert all(torch.allclose(g1, g2, rtol=1e-5, atol=1e-6) for g1, g2 in zip(*grads))
    with torch.no_grad():  # inference is declared supported too
        gated_act(gate, up, nn.SiLU(), x)
    assert len(calls) == 2


def test_the_library_kernel_runs_on_the_halves_of_one_projection(stand_in):
    """(Liger-Kernel's SiLU-mul takes the strided halves as they are: right values and
    gradients on an H200, evaluation/bench/shape_kernels.py)"""
    _kernel, calls = stand_in
    proj, _ = _mlp()
    x = torch.randn(2, 3, 8)
    up, gate = proj(x).chunk(2, dim=-1)
    assert not gate.is_contiguous()
    got = gated_act_mul(nn.SiLU(), gate, up)
    assert calls == [(torch.Size([2, 3, 8]), torch.float32)]
    assert torch.allclose(got, up * F.silu(gate), rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("case", ["float64", "another activation", "shapes differ", "too wide", "empty",
                                  "training not declared", "under torch.compile"])
def test_the_original_ops_run_where_the_declared_support_does_not_hold(stand_in, monkeypatch, case):
    kernel, calls = stand_in
    a, b = torch.randn(4, 16), torch.randn(4, 16)
    act = nn.SiLU()
    if case == "float64":
        a, b = a.double(), b.double()
    elif case == "another activation":
        act = nn.ReLU()
    elif case == "shapes differ":
        b = torch.randn(1, 16)
    elif case == "too wide":
        monkeypatch.setattr(kernels, "SILU_MUL", replace(kernel, max_last_dim=8))
    elif case == "empty":
        a, b = a[:0], b[:0]
    elif case == "training not declared":
        monkeypatch.setattr(kernels, "SILU_MUL", replace(kernel, training=False))
        a.requires_grad_()
    elif case == "under torch.compile":
        monkeypatch.setattr(torch.compiler, "is_compiling", lambda: True)
    out = gated_act(lambda _: a, lambda _: b, act, None)
    assert calls == []
    assert torch.equal(out, act(a) * b)


def test_a_missing_library_is_unavailable_with_its_reason_and_the_original_ops_run(monkeypatch):
    missing = LibraryKernel("no_such_library.ops", "SiLUMul", devices=frozenset({"cpu"}),
                            dtypes=frozenset({torch.float32}), training=True, inference=True, compile=False)
    monkeypatch.setattr(kernels, "SILU_MUL", missing)
    a, b = torch.randn(4, 16), torch.randn(4, 16)
    assert torch.equal(gated_act(lambda _: a, lambda _: b, nn.SiLU(), None), F.silu(a) * b)
    assert "ModuleNotFoundError" in missing.unavailable_reason() and "no_such_library" in missing.unavailable_reason()


@pytest.mark.skipif(importlib.util.find_spec("liger_kernel") is None or importlib.util.find_spec("triton") is not None,
                    reason="for an environment with liger-kernel installed and no Triton (make verify-setup's)")
def test_liger_installed_without_triton_is_unavailable():
    # make verify-setup installs liger-kernel (--no-deps) beside the CPU torch, which has no Triton
    on_cpu = replace(SILU_MUL, devices=frozenset({"cpu"}))
    assert not on_cpu.supports(torch.randn(4, 16), torch.randn(4, 16))
    assert "triton" in on_cpu.unavailable_reason()


# --- rotary: apply_rotary and Liger-Kernel's LigerRopeFunction ------------------------------

def _rotate_half(x):
    x1 = x[..., : x.shape[-1] // 2]
    x2 = x[..., x.shape[-1] // 2 :]
    return torch.cat((-x2, x1), dim=-1)


def _rope_inputs(batch=2, heads=3, seq=5, dim=8, cos_shape=None, dtype=torch.float32):
    torch.manual_seed(0)
    x = torch.randn(batch, seq, heads, dim, dtype=dtype).transpose(1, 2)  # (b, h, s, d), as attention has it
    cos = torch.randn(*(cos_shape or (1, 1, seq, dim)), dtype=dtype)
    return x, cos, torch.randn_like(cos)


def test_apply_rotary_computes_the_original_ops_with_the_same_gradients():
    x, cos, sin = _rope_inputs()
    x.requires_grad_()
    expected = (x * cos) + (_rotate_half(x) * sin)
    got = apply_rotary(x, cos, sin)
    assert torch.equal(got, expected)  # on CPU the fallback runs: bit for bit
    assert torch.equal(torch.autograd.grad(got.square().sum(), x)[0], torch.autograd.grad(expected.square().sum(), x)[0])


def test_apply_rotary_computes_the_rotation_of_unbound_halves():
    # diffusers' `_rotate_half`: the halves as the rows of `unflatten(-1, (2, -1)).unbind(-2)`, which
    # the rotary rule reads as halves and the rewrite replaces by apply_rotary
    def rotate_unbound(x):
        x1, x2 = x.unflatten(-1, (2, -1)).unbind(-2)
        return torch.cat((-x2, x1), dim=-1)

    x, cos, sin = _rope_inputs()
    assert torch.equal(apply_rotary(x, cos, sin), (x * cos) + (rotate_unbound(x) * sin))


@pytest.fixture
def rope_stand_in(monkeypatch):
    """LigerRopeFunction's contract on CPU: (q, k, cos, sin) of (b, h, s, d), cos/sin (1|b, s, d)
    or with a head dimension of 1; it writes into q and k where their transposed layout is
    contiguous (as the Triton kernel does) and returns no gradient for cos and sin."""
    calls = []

    def rope(t, cos, sin):
        return (t * cos) + (_rotate_half(t) * sin)

    class Rope(torch.autograd.Function):
        @staticmethod
        def forward(ctx, q, k, cos, sin, position_ids=None, unsqueeze_dim=1):
            calls.append((tuple(q.shape), tuple(k.shape), tuple(cos.shape)))
            cos4, sin4 = (cos, sin) if cos.dim() == 4 else (cos.unsqueeze(1), sin.unsqueeze(1))
            ctx.save_for_backward(cos4, sin4)
            out = []
            for t in (q, k):
                physical = t.transpose(1, 2).contiguous()  # the same storage when already contiguous
                physical.copy_(rope(t, cos4, sin4).transpose(1, 2))
                out.append(physical.transpose(1, 2))
            return tuple(out)

        @staticmethod
        def backward(ctx, dq, dk):
            cos, sin = ctx.saved_tensors
            # rope is linear in t: its transpose rotates the other way
            def back(g):
                return g * cos - _rotate_half(g * sin)
            return back(dq), back(dk), None, None, None, None

    module = types.ModuleType("stand_in_rope")
    module.Rope = Rope
    monkeypatch.setitem(sys.modules, "stand_in_rope", module)
    kernel = replace(ROPE, module="stand_in_rope", name="Rope", devices=frozenset({"cpu"}))
    monkeypatch.setattr(kernels, "ROPE", kernel)
    return calls


@pytest.mark.parametrize("cos_shape", [(1, 1, 5, 8), (2, 1, 5, 8), (1, 5, 8), (2, 5, 8)])
def test_the_rope_kernel_runs_where_its_declared_support_holds(rope_stand_in, cos_shape):
    x, cos, sin = _rope_inputs(cos_shape=cos_shape)
    x.requires_grad_()
    before = x.detach().clone()
    c4, s4 = (cos, sin) if cos.dim() == 4 else (cos.unsqueeze(1), sin.unsqueeze(1))
    expected = (x * c4) + (_rotate_half(x) * s4)
    got = apply_rotary(x, cos, sin)
    assert rope_stand_in == [((2, 3, 5, 8), (2, 1, 5, 8), cos_shape)]
    assert torch.allclose(got, expected, rtol=1e-6, atol=1e-6)
    assert torch.equal(x.detach(), before)  # the caller's tensor is not written into
    g1, g2 = (torch.autograd.grad(y.square().sum(), x, retain_graph=True)[0] for y in (got, expected))
    assert torch.allclose(g1, g2, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("case", ["float64", "3-d", "odd head_dim", "per-head cos",
                                  "cos wants a gradient", "under torch.compile"])
def test_the_original_rope_ops_run_where_the_declared_support_does_not_hold(rope_stand_in, monkeypatch, case):
    x, cos, sin = _rope_inputs()
    if case == "float64":
        x, cos, sin = _rope_inputs(dtype=torch.float64)
    elif case == "3-d":
        x, cos, sin = x[0], cos[0], sin[0]
    elif case == "odd head_dim":
        x, cos, sin = _rope_inputs(dim=7)
    elif case == "per-head cos":
        x, cos, sin = _rope_inputs(cos_shape=(1, 3, 5, 8))
    elif case == "cos wants a gradient":
        cos.requires_grad_()
    elif case == "under torch.compile":
        monkeypatch.setattr(torch.compiler, "is_compiling", lambda: True)
    out = apply_rotary(x, cos, sin)
    assert rope_stand_in == []
    assert torch.equal(out, (x * cos) + (_rotate_half(x) * sin))


# --- groupnorm_silu: group_norm_silu and Liger-Kernel's LigerGroupNormFunction ----------------

def _norm_and_input(affine=True, dtype=torch.float32, shape=(2, 4, 3, 3)):
    torch.manual_seed(0)
    norm = nn.GroupNorm(2, 4, affine=affine).to(dtype)
    if affine:
        with torch.no_grad():
            norm.weight.uniform_(0.5, 1.5)
            norm.bias.uniform_(-0.5, 0.5)
    return norm, torch.randn(*shape, dtype=dtype)


def test_group_norm_silu_computes_the_original_ops_with_the_same_gradients():
    norm, x = _norm_and_input()
    x.requires_grad_()
    expected = F.silu(norm(x))
    got = group_norm_silu(norm, x)
    assert torch.equal(got, expected)
    wrt = [x, norm.weight, norm.bias]
    assert all(torch.equal(a, b) for a, b in zip(torch.autograd.grad(got.square().sum(), wrt),
                                                 torch.autograd.grad(expected.square().sum(), wrt)))


@pytest.fixture
def group_norm_stand_in(monkeypatch):
    """LigerGroupNormFunction's contract on CPU: (x, weight, bias, num_channels, num_groups, eps)."""
    calls = []

    def fn(x, weight, bias, channels, groups, eps):
        calls.append((tuple(x.shape), channels, groups))
        return F.group_norm(x, groups, weight, bias, eps)  # differentiable: stands for forward and backward

    module = types.ModuleType("stand_in_group_norm")
    module.group_norm = fn
    monkeypatch.setitem(sys.modules, "stand_in_group_norm", module)
    monkeypatch.setattr(kernels, "GROUP_NORM", replace(GROUP_NORM, module="stand_in_group_norm", name="group_norm",
                                                       devices=frozenset({"cpu"})))
    return calls


def test_the_group_norm_kernel_runs_where_its_declared_support_holds(group_norm_stand_in):
    norm, x = _norm_and_input()
    got = group_norm_silu(norm, x)
    assert group_norm_stand_in == [((2, 4, 3, 3), 4, 2)]
    assert torch.allclose(got, F.silu(norm(x)), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("act", [nn.SiLU(), nn.GELU(), nn.Mish()], ids=["SiLU", "GELU", "Mish"])
def test_group_norm_act_runs_the_norm_then_the_module_as_it_is(group_norm_stand_in, act):
    """groupnorm_silu.get_activation's kernel: whatever module get_activation returned."""
    norm, x = _norm_and_input(dtype=torch.float64)
    assert torch.equal(group_norm_act(norm, act, x), act(norm(x)))  # float64: no kernel, the original ops
    assert group_norm_stand_in == []
    norm, x = _norm_and_input()
    got = group_norm_act(norm, act, x)
    assert group_norm_stand_in == [((2, 4, 3, 3), 4, 2)]
    assert torch.allclose(got, act(norm(x)), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("case", ["float64", "not affine", "2-d input", "a subclass", "weights in another dtype",
                                  "under torch.compile"])
def test_the_original_group_norm_runs_where_the_declared_support_does_not_hold(group_norm_stand_in, monkeypatch, case):
    norm, x = _norm_and_input()
    if case == "float64":
        norm, x = _norm_and_input(dtype=torch.float64)
    elif case == "not affine":
        norm, x = _norm_and_input(affine=False)
    elif case == "2-d input":
        x = x[:, :, 0, 0]
    elif case == "a subclass":
        norm.__class__ = type("MyGroupNorm", (nn.GroupNorm,), {})
    elif case == "weights in another dtype":
        x = x.bfloat16()
    elif case == "under torch.compile":
        monkeypatch.setattr(torch.compiler, "is_compiling", lambda: True)
    out = group_norm_silu(norm, x)
    assert group_norm_stand_in == []
    assert torch.equal(out, F.silu(norm(x)))
