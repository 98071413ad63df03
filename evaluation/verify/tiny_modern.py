"""Per-model exceptions for tiny random models of today's code (transformers 5.23.0, the
modern sample: evaluation/modern/sample.tsv), used by `tiny.py` when the installed
transformers is 5.x (`.venv-verify5`, `make verify5-setup`). Keys are the file's model id
(`modeling_<id>.py`), which may differ from its package (`data2vec_text` in `data2vec`).

Composite models of 5.x build some sub-models with `AutoModel.from_config`, i.e. from the
installed package, not from the loaded (patched) copy; where the patched layers live in such
a tower, the class to build is the tower itself (`voxtral`, `smolvlm`), so that the copy's
own code runs. The line watch of `make verify-modern` says whether it did.
"""

from __future__ import annotations

from typing import Any

import torch

from evaluation.verify import tiny
from evaluation.verify.tiny import BATCH, IMAGE, SEQ, Override, ids, shrink_config, tiny_of


def _with_resnet_backbone(config_name: str, **backbone: Any):
    """DETR-style configs default to a timm backbone (timm would pull a CUDA torch): a tiny
    transformers ResNet instead."""
    def make(module: Any) -> Any:
        return shrink_config(getattr(module, config_name), extra={"backbone_config": tiny_of("resnet", **backbone)})
    return make


def _muse_glimmer_inputs(config: Any, gen: torch.Generator) -> dict:
    """Text ids for the text model; for the vision model, Qwen2-VL-style packed patches
    (one row per patch) and each image's (t, h, w) patch grid."""
    if hasattr(config, "vocab_size"):
        return {"input_ids": ids(config, gen)}
    grid = torch.tensor([[1, 4, 4]] * BATCH)
    width = config.patch_temporal * 3 * config.patch_size ** 2
    return {"pixel_values": torch.randn(int(grid.prod(-1).sum()), width, generator=gen), "grid_thw": grid}


def _muse_glimmer_post(config: Any) -> None:
    if not hasattr(config, "vocab_size"):  # the vision config: small patches, a small position grid
        config.patch_size, config.pos_emb_height, config.pos_emb_width = 4, 8, 8


OVERRIDES: dict[str, Override] = {
    # the zoo's exceptions still hold for these model ids in 5.23.0
    "lilt": tiny.OVERRIDES["lilt"],  # hidden size divisible by its channel shrink ratio
    "lxmert": tiny.OVERRIDES["lxmert"],  # visual features as inputs
    "pop2piano": tiny.OVERRIDES["pop2piano"],  # the encoder-decoder, not a bare stack
    # no timm: a ResNet backbone (DETR reads the last stage; Deformable DETR three of them)
    "detr": Override(make_config=_with_resnet_backbone("DetrConfig", out_features=["stage4"])),
    "deformable_detr": Override(make_config=_with_resnet_backbone(
        "DeformableDetrConfig", out_features=["stage2", "stage3", "stage4"])),
    # an image token id the random text ids (>= 3) never hit: text only
    "chameleon": Override(config={"vocabulary_map": {"<image>": 1}},
                          inputs=lambda c, g: {"input_ids": ids(c, g)}),
    # the decoder reads num_key_value_heads, which the config only gets from a checkpoint
    "moonshine_streaming": Override(config={"num_key_value_heads": 2}),
    # (batch, frames, mel bins)
    "nemotron_asr_streaming": Override(
        config={"subsampling_conv_channels": 16},
        inputs=lambda c, g: {"input_features": torch.randn(BATCH, 64, c.num_mel_bins, generator=g)}),
    # block types repeat (recurrent, recurrent, attention): three layers reach an attention block
    "recurrent_gemma": Override(config={"num_hidden_layers": 3}),
    # the text model (the composite builds it from the installed package); the vision tower
    # is a second run (evaluation/verify/modern.py)
    "muse_glimmer": Override(cls="MuseGlimmerTextModel", inputs=_muse_glimmer_inputs, post=_muse_glimmer_post),
    # the towers that hold the patched layers (the composites build theirs from the installed package)
    "smolvlm": Override(cls="SmolVLMVisionTransformer"),
    "voxtral": Override(cls="VoxtralEncoder"),
}


if tiny.TRANSFORMERS_MAJOR >= 5:
    tiny.use_overrides(OVERRIDES)
