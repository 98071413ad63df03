"""`adopter.kernels`, kept for model files patched before the kernels became a distribution of
their own: they are adopter-kernels' `adopter_kernels` (kernels/ in this repository), which
`adopter apply` names now. Importing this needs that distribution (and torch) installed."""

import sys

import adopter_kernels
from adopter_kernels import attention, library

# `from adopter.kernels.attention import BertSelfAttentionSDPA` in an older patched file
sys.modules[__name__ + ".attention"] = attention
sys.modules[__name__ + ".library"] = library


def __getattr__(name: str):
    """`from adopter.kernels import gated_silu`: the name as adopter_kernels has it."""
    return getattr(adopter_kernels, name)
