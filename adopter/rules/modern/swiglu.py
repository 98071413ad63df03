# Fixture for adopter/rules/modern/swiglu.adopt.
import torch
import torch.nn.functional as F
from torch import nn

from transformers.activations import ACT2FN


class LlamaMLP(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.gate_proj = nn.Linear(config.hidden_size, config.intermediate_size, bias=False)
        self.up_proj = nn.Linear(config.hidden_size, config.intermediate_size, bias=False)
        self.down_proj = nn.Linear(config.intermediate_size, config.hidden_size, bias=False)
        self.act_fn = ACT2FN[config.hidden_act]

    def forward(self, x):
        # match: swiglu
        down_proj = self.down_proj(self.act_fn(self.gate_proj(x)) * self.up_proj(x))
        return down_proj


class Statements(LlamaMLP):
    # T5's T5DenseGatedActDense: one statement per step
    def forward(self, hidden_states):
        # match: swiglu
        hidden_gelu = self.act_fn(self.gate_proj(hidden_states))
        hidden_linear = self.up_proj(hidden_states)
        hidden_states = hidden_gelu * hidden_linear
        return self.down_proj(hidden_states)


class ProductSwapped(LlamaMLP):
    def forward(self, x):
        # match: swiglu
        gate = self.act_fn(self.gate_proj(x))
        up = self.up_proj(x)
        return self.down_proj(up * gate)


class UnderAGuard(LlamaMLP):
    def forward(self, x, gated: bool):
        if gated:
            # match: swiglu
            return self.down_proj(self.act_fn(self.gate_proj(x)) * self.up_proj(x))
        return self.down_proj(self.up_proj(x))


class OtherKey(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.w1 = nn.Linear(8, 16, bias=config.mlp_bias)
        self.w3 = nn.Linear(8, 16, bias=config.mlp_bias)
        self.w2 = nn.Linear(16, 8, bias=config.mlp_bias)
        self.act = ACT2FN[config.hidden_activation]

    def forward(self, h):
        # match: swiglu
        return self.w2(self.act(self.w1(h)) * self.w3(h))


class SiLUModule(nn.Module):
    def __init__(self):
        super().__init__()
        self.gate_proj = nn.Linear(8, 16)
        self.up_proj = nn.Linear(8, 16)
        self.down_proj = nn.Linear(16, 8)
        self.act_fn = nn.SiLU()

    def forward(self, x):
        # match: swiglu
        return self.down_proj(self.act_fn(self.gate_proj(x)) * self.up_proj(x))


class GeGLUModule(SiLUModule):
    def __init__(self):
        super().__init__()
        self.act_fn = nn.GELU(approximate="tanh")

    def forward(self, x):
        # match: swiglu
        return self.down_proj(self.act_fn(self.gate_proj(x)) * self.up_proj(x))


class ReLUModule(SiLUModule):
    def __init__(self):
        super().__init__()
        self.act_fn = nn.ReLU()

    def forward(self, x):
        # no-match: swiglu
        return self.down_proj(self.act_fn(self.gate_proj(x)) * self.up_proj(x))


class TwoInputs(LlamaMLP):
    def forward(self, x, y):
        # no-match: swiglu
        return self.down_proj(self.act_fn(self.gate_proj(x)) * self.up_proj(y))


class OneProjection(LlamaMLP):
    def forward(self, x):
        # no-match: swiglu
        return self.down_proj(self.act_fn(self.gate_proj(x)) * self.gate_proj(x))


class ActivationReadElsewhere(LlamaMLP):
    def forward(self, x):
        # no-match: swiglu
        gate = self.act_fn(self.gate_proj(x))
        return self.down_proj(gate * self.up_proj(x)), gate


class ActivationOfTheProduct(LlamaMLP):
    def forward(self, x):
        # no-match: swiglu
        return self.down_proj(self.act_fn(self.gate_proj(x) * self.up_proj(x)))


class Sum(LlamaMLP):
    def forward(self, x):
        # no-match: swiglu
        return self.down_proj(self.act_fn(self.gate_proj(x)) + self.up_proj(x))


class ClampBetween(LlamaMLP):
    def forward(self, x):
        # no-match: swiglu
        gate = self.act_fn(self.gate_proj(x)).clamp(max=7.0)
        return self.down_proj(gate * self.up_proj(x))


class UpFirst(LlamaMLP):
    def forward(self, x):
        # the up projection runs first: the written order of the nodes means nothing
        # match: swiglu
        return self.down_proj(self.up_proj(x) * self.act_fn(self.gate_proj(x)))


class FunctionalSiLU(LlamaMLP):
    def forward(self, x):
        # the SiLU function (swiglu.silu_fn.adopt)
        # match: swiglu
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


class FunctionalGELU(LlamaMLP):
    def forward(self, x):
        # the exact GELU function (swiglu.gelu_fn.adopt, detect-only)
        # match: swiglu
        return self.down_proj(F.gelu(self.gate_proj(x)) * self.up_proj(x))


# --- the chunked shape: one projection holds both halves (swiglu.chunk_*.adopt) ------------

class ChunkedGateLast(nn.Module):
    # diffusers' SwiGLU
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(8, 32)
        self.activation = nn.SiLU()

    def forward(self, hidden_states):
        hidden_states = self.proj(hidden_states)
        hidden_states, gate = hidden_states.chunk(2, dim=-1)
        # match: swiglu
        return hidden_states * self.activation(gate)


class ChunkedGateFirst(nn.Module):
    # ModernBERT's decoder MLP: the activation on the first half, a dropout before the down projection
    def __init__(self, config):
        super().__init__()
        self.Wi = nn.Linear(8, 32)
        self.act = ACT2FN[config.hidden_activation]
        self.drop = nn.Dropout(0.1)
        self.Wo = nn.Linear(16, 8)

    def forward(self, hidden_states):
        input, gate = self.Wi(hidden_states).chunk(2, dim=-1)
        # match: swiglu
        return self.Wo(self.drop(self.act(input) * gate))


class ChunkedFunctional(ChunkedGateLast):
    def forward(self, h):
        x, gate = self.proj(h).chunk(2, dim=-1)
        # match: swiglu
        y = x * F.silu(gate)
        a, b = torch.chunk(self.proj(h), 2, -1)
        # match: swiglu
        return y + F.silu(a) * b


class ChunkedGELUHelper(ChunkedGateLast):
    # diffusers' GEGLU: the GELU in a helper method, upcast on old MPS builds
    # (swiglu.chunk_gelu_fn_last.adopt, detect-only); reported where the product calls it
    def gelu(self, gate):
        if gate.device.type == "mps":
            return F.gelu(gate.to(dtype=torch.float32)).to(dtype=gate.dtype)
        return F.gelu(gate)

    def forward(self, hidden_states):
        hidden_states, gate = self.proj(hidden_states).chunk(2, dim=-1)
        # match: swiglu
        return hidden_states * self.gelu(gate)


class ChunkedGELUFunction(ChunkedGateLast):
    def forward(self, h):
        x, gate = self.proj(h).chunk(2, dim=-1)
        # match: swiglu
        return x * F.gelu(gate)


class ChunkedOtherDim(ChunkedGateLast):
    def forward(self, h):
        x, gate = self.proj(h).chunk(2, dim=1)
        # no-match: swiglu
        return x * self.activation(gate)


class ChunkedSameHalf(ChunkedGateLast):
    def forward(self, h):
        x, gate = self.proj(h).chunk(2, dim=-1)
        # no-match: swiglu
        return gate * self.activation(gate)


class ChunkedHalvesOfTwoValues(ChunkedGateLast):
    def forward(self, h):
        x, _ = self.proj(h).chunk(2, dim=-1)
        _, gate = self.proj(h + 1).chunk(2, dim=-1)
        # no-match: swiglu
        return x * self.activation(gate)


class ChunkedActivationReadElsewhere(ChunkedGateLast):
    def forward(self, h):
        x, gate = self.proj(h).chunk(2, dim=-1)
        a = self.activation(gate)
        # no-match: swiglu
        return x * a, a


class ChunkedFunctionalLinear(nn.Module):
    # MoE experts: a functional linear on a Parameter, not an nn.Linear module
    def __init__(self):
        super().__init__()
        self.gate_up_proj = nn.Parameter(torch.empty(4, 32, 8))
        self.act_fn = nn.SiLU()

    def forward(self, h, expert: int):
        gate, up = F.linear(h, self.gate_up_proj[expert]).chunk(2, dim=-1)
        # no-match: swiglu
        return self.act_fn(gate) * up


class PassedGLU(nn.Module):
    """x-transformers' GLU: the activation is a constructor argument, which the class building it
    also places in a Sequential of its own; the rewrite calls it as this class holds it (`self.act`)."""
    def __init__(self, dim, activation):
        super().__init__()
        self.act = activation
        self.proj = nn.Linear(dim, dim * 2)

    def forward(self, x):
        up, gate = self.proj(x).chunk(2, dim=-1)
        # match: swiglu
        return up * self.act(gate)


class FeedForwardWithGLU(nn.Module):
    def __init__(self, dim, glu):
        super().__init__()
        activation = nn.SiLU()
        proj_in = PassedGLU(dim, activation) if glu else nn.Sequential(nn.Linear(dim, dim), activation)
        self.ff = nn.Sequential(proj_in, nn.Linear(dim, dim))

    def forward(self, x):
        return self.ff(x)


class LoRALinear(nn.Module):
    # litgpt's LoRA: a Linear plus a low-rank branch of the same input; it projects as a Linear does
    def __init__(self, in_features, out_features, r=4):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.lora_A = nn.Parameter(torch.zeros(r, in_features))
        self.lora_B = nn.Parameter(torch.zeros(out_features, r))
        self.r = r

    def forward(self, x):
        pretrained = self.linear(x)
        if self.r == 0:
            return pretrained
        return pretrained + (x @ self.lora_A.transpose(0, 1) @ self.lora_B.transpose(0, 1))


class AdapterLinear(nn.Module):
    # litgpt's AdapterV2Linear: a Linear, then a bias and a scale
    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.adapter_bias = nn.Parameter(torch.zeros(out_features))
        self.adapter_scale = nn.Parameter(torch.ones(out_features))

    def forward(self, x):
        return self.adapter_scale * (self.linear(x) + self.adapter_bias)


class SometimesLinear(nn.Module):
    # one return is no Linear's output: not a projection
    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x, skip=False):
        if skip:
            return x
        return self.linear(x)


def create_lora_linear(in_size, out_size):
    return LoRALinear(in_size, out_size)


class LoRAMLP(nn.Module):
    # litgpt's lora.LLaMAMLP: both projections built by one builder
    def __init__(self, dim, hidden):
        super().__init__()
        self.fc_1 = create_lora_linear(dim, hidden)
        self.fc_2 = create_lora_linear(dim, hidden)
        self.proj = create_lora_linear(hidden, dim)

    def forward(self, x):
        # match: swiglu
        x_fc_1 = self.fc_1(x)
        x_fc_2 = self.fc_2(x)
        x = F.silu(x_fc_1) * x_fc_2
        return self.proj(x)


class AdapterGeGLU(nn.Module):
    def __init__(self, dim, hidden):
        super().__init__()
        self.fc_1 = AdapterLinear(dim, hidden)
        self.fc_2 = AdapterLinear(dim, hidden)

    def forward(self, x):
        # match: swiglu
        return F.gelu(self.fc_1(x), approximate="tanh") * self.fc_2(x)


class SometimesLinearMLP(nn.Module):
    def __init__(self, dim, hidden):
        super().__init__()
        self.fc_1 = SometimesLinear(dim, hidden)
        self.fc_2 = SometimesLinear(dim, hidden)

    def forward(self, x):
        # no-match: swiglu
        return F.silu(self.fc_1(x)) * self.fc_2(x)


class GroupedExperts(nn.Module):
    # torchtitan's MoE experts: grouped GEMMs with every expert's weights, in a method of the module
    def __init__(self, experts, dim, hidden):
        super().__init__()
        self.w1 = nn.Parameter(torch.empty(experts, hidden, dim))
        self.w3 = nn.Parameter(torch.empty(experts, hidden, dim))

    def forward(self, x, offsets):
        # match: swiglu
        h = F.silu(self._grouped_mm(A=x.bfloat16(), B_t=self.w1.bfloat16().transpose(-2, -1), offs=offsets))
        h = h * self._grouped_mm(A=x.bfloat16(), B_t=self.w3.bfloat16().transpose(-2, -1), offs=offsets)
        return h

    def _grouped_mm(self, *, A, B_t, offs):
        return torch._grouped_mm(A, B_t, offs=offs)


class ExpertsMatmul(nn.Module):
    def __init__(self, dim, hidden):
        super().__init__()
        self.w_gate = nn.Parameter(torch.empty(dim, hidden))
        self.w_up = nn.Parameter(torch.empty(dim, hidden))

    def forward(self, x, y):
        # match: swiglu
        a = F.silu(x @ self.w_gate) * (x @ self.w_up)
        # two inputs: no gated projection of one value
        # no-match: swiglu
        b = F.silu(x @ self.w_gate) * (y @ self.w_up)
        return a, b
