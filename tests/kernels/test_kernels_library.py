"""adopter.kernels.gated_act and the library kernels it may pick (adopter/kernels/library.py):
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

import adopter.kernels as kernels  # noqa: E402
from adopter.kernels import gated_act  # noqa: E402
from adopter.kernels.library import GELU_TANH_MUL, SILU_MUL, LibraryKernel  # noqa: E402


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
