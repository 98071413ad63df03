"""Tiny random models of the zoo: config, class and inputs, for differential verification.

`tiny_config(model, module)` starts from the defaults of the model's config class and
shrinks them by parameter name (hidden sizes 32, 2 layers, 2 heads, intermediate 64,
image 64, one block per stage, small vocabularies), recursing into sub-configs
(text/vision/audio configs, backbones). `OVERRIDES` holds the per-model exceptions:
divisibility constraints, window and chunk sizes, the class to build, and input builders
for models whose `forward` does not take plain `input_ids` / `pixel_values` /
`input_values`.

`build(model, module, seed)` instantiates a class of an already-loaded modeling module
(see `loader.py`) with that config under `torch.manual_seed(seed)` and returns
`(model in eval mode, inputs)`; inputs come from a generator seeded with `seed`, so two
builds with the same seed get identical inputs.

Anything that cannot be built raises `NotInstantiable` with a concrete reason.
"""

from __future__ import annotations

import importlib
import inspect
import re
import types
from dataclasses import dataclass, field
from typing import Any, Callable

import torch
import transformers
from transformers import PretrainedConfig, PreTrainedModel

TRANSFORMERS_MAJOR = int(transformers.__version__.split(".")[0])

BATCH = 2
SEQ = 16
IMAGE = 64
AUDIO_SAMPLES = 3200
HIDDEN = 32
FFN = 64
LAYERS = 2
HEADS = 2


class NotInstantiable(Exception):
    """The model cannot be built and run here; the message says why."""


# --------------------------------------------------------------------------- shrink rules

_HIDDEN_NAMES = {
    "hidden_size", "d_model", "n_embd", "n_embed", "dim", "embed_dim", "emb_dim", "embedding_dim",
    "d_embed", "hidden_dim", "word_embed_proj_dim", "projection_dim", "text_embed_dim",
    "vision_embed_dim", "encoder_hidden_size", "mit_hidden_size", "visual_embedding_dim",
    "d_latents", "image_text_hidden_size", "fusion_hidden_size", "span_hidden_size",
    "retriever_proj_size", "shared_representation_size", "pronunciation_embed_dim",
    "shape_embed_dim", "entity_emb_size", "input_embedding_size", "output_embedding_size",
    "codevector_dim", "proj_codevector_dim", "classifier_proj_size", "xvector_output_dim",
    "mask_feature_size", "feature_size", "fpn_feature_size", "mask_dim", "decoder_hidden_size",
    "aspp_out_channels", "auxiliary_channels", "embedding_size", "text_encoder_width",
    "iou_head_hidden_dim", "output_channels", "speaker_embedding_dim", "ema_projection_size",
    "visual_feat_dim", "retrieval_vector_size", "d_spout", "prompt_mid_dim",
    "upsample_initial_channel", "speech_decoder_postnet_units", "speech_decoder_prenet_units",
    "flow_size", "duration_predictor_filter_channels", "output_num_channels", "conv_channels",
    "qformer_hidden_size", "conv_dim",
}
_HEAD_DIM_NAMES = {"d_head", "d_kv", "dim_head", "attention_head_size", "key_dim"}
_FFN_NAMES = {
    "intermediate_size", "ffn_dim", "encoder_ffn_dim", "decoder_ffn_dim", "d_ff", "dff", "n_inner",
    "d_inner", "dim_ff", "decoder_intermediate_size", "mit_intermediate_size",
    "encoder_feedforward_dim", "dim_feedforward", "ffn_embedding_dim", "feed_forward_size",
    "mlp_dim", "projection_intermediate_dim", "nffn_hidden_size", "d_ext",
}
_LAYER_NAMES = {
    "num_hidden_layers", "num_layers", "n_layer", "n_layers", "encoder_layers", "decoder_layers",
    "num_encoder_layers", "num_decoder_layers", "decoder_num_hidden_layers", "text_encoder_num_layers",
    "num_self_attends_per_block", "num_switch_layers", "num_sparse_encoder_layers",
    "num_sparse_decoder_layers", "speech_decoder_postnet_layers", "posterior_encoder_num_wavenet_layers",
    "prior_encoder_num_wavenet_layers", "depth_separable_num_layers", "num_adapter_layers",
}
_ONE_LAYER_NAMES = {"l_layers", "x_layers", "r_layers", "prompt_layers", "query_dec_layers",
                    "text_encoder_proj_layers", "num_lstm_layers"}
_HEAD_NAMES = {
    "num_attention_heads", "n_head", "n_heads", "num_heads", "encoder_attention_heads",
    "decoder_attention_heads", "attention_heads", "num_encoder_attention_heads",
    "num_decoder_attention_heads", "decoder_num_attention_heads", "num_cross_attention_heads",
    "num_self_attention_heads", "mit_num_attention_heads", "prompt_num_attention_heads",
    "num_key_value_heads", "guided_attention_loss_num_heads",
}
_SMALL_VOCAB_NAMES = {
    "entity_vocab_size", "pronunciation_vocab_size", "shape_vocab_size", "text_encoder_vocab_size",
    "src_vocab_size", "tgt_vocab_size", "input_vocab_size", "output_vocab_size", "num_bpe_labels",
    "num_wordpiece_labels", "num_hash_buckets", "music_vocab_size", "nb_discrete_codes",
    "num_codevectors_per_group", "composer_vocab_size",
}
_IMAGE_NAMES = {"image_size", "pretrain_image_size"}
_SMALL_NAMES = {  # name -> cap
    "rotary_dim": 8, "num_groups": 2, "num_frames": 2, "num_conv_pos_embeddings": 16,
    "num_conv_pos_embedding_groups": 2, "codebook_size": 64, "num_queries": 10,
    "num_query_tokens": 4, "max_source_positions": 16, "num_latents": 8,
}
_DEPTH_LIST_NAMES = {"depths", "depth", "num_block_repeats", "n_attn_blocks"}
_HIDDEN_LIST_NAMES = {"hidden_sizes", "embed_dim", "embed_dims", "neck_hidden_sizes",
                      "convstream_hidden_sizes", "fusion_hidden_sizes", "conv_dim", "tdnn_dim",
                      "base_attn_unit_dims"}
_HEAD_LIST_NAMES = {"num_heads", "num_attention_heads", "heads"}
_SPECIAL_TOKEN_NAMES = ("pad_token_id", "bos_token_id", "eos_token_id", "decoder_start_token_id",
                        "sep_token_id", "cls_token_id", "mask_token_id", "unk_token_id",
                        "forced_bos_token_id", "forced_eos_token_id", "question_token_id",
                        "separator_token_id", "pad_index", "bos_index", "eos_index", "unk_index",
                        "mask_index", "image_token_index", "mask_token_index")
# A backbone sub-config keeps the stages its parent picked, unless shrinking removed them.
_BACKBONE_SELECTORS = ("out_features", "out_indices")


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _int_list(value: Any) -> bool:
    return isinstance(value, (list, tuple)) and len(value) > 0 and all(_is_int(v) for v in value)


def _scale_list(values: list[int]) -> list[int]:
    """Divide a list of widths by one power of two so its largest is below 128."""
    factor = 1
    while max(values) // (factor * 2) >= 64:
        factor *= 2
    return [max(8, v // factor) for v in values]


def _max_special(values: dict[str, Any]) -> int:
    best = -1
    for name in _SPECIAL_TOKEN_NAMES:
        v = values.get(name)
        if _is_int(v):
            best = max(best, v)
        elif isinstance(v, (list, tuple)):
            best = max([best] + [x for x in v if _is_int(x)])
    return best


def shrink_value(name: str, value: Any) -> Any:
    """The tiny value for one config parameter, or `value` itself when no rule applies."""
    if _is_int(value):
        # the first group naming the parameter gives its cap (order matters)
        for names, cap in ((_HIDDEN_NAMES, HIDDEN), (_HEAD_DIM_NAMES, 16), (_FFN_NAMES, FFN),
                           (_LAYER_NAMES, LAYERS), (_ONE_LAYER_NAMES, 1), (_HEAD_NAMES, HEADS),
                           (_IMAGE_NAMES, IMAGE), (_SMALL_VOCAB_NAMES, 99)):
            if name in names:
                return min(value, cap)
        if name in _SMALL_NAMES:
            return min(value, _SMALL_NAMES[name])
        return value
    if name in _IMAGE_NAMES and _int_list(value) and len(value) == 2:
        return type(value)(min(v, IMAGE) for v in value)
    if _int_list(value):
        if name in _DEPTH_LIST_NAMES:
            return type(value)(min(v, 1) for v in value)
        if name in _HEAD_LIST_NAMES:
            return type(value)(min(v, HEADS) for v in value)
        if name in _HIDDEN_LIST_NAMES:
            return type(value)(_scale_list(list(value)))
    if isinstance(value, float) and name.endswith("layerdrop"):
        return 0.0
    return value


# --------------------------------------------------------------------------- overrides


@dataclass
class Override:
    """Per-model exceptions to the generic rules.

    config: parameter values applied after shrinking; a key `sub.param` reaches into the
        sub-config passed as parameter `sub` (e.g. `vision_config.window_size`).
    cls: the class to build instead of the base `<X>Model`.
    inputs: (config, generator) -> dict of inputs, replacing the generic builder.
    extra_inputs: (config, generator) -> dict added to the generic inputs.
    make_config: (module) -> config, replacing the generic construction.
    post: (config) -> None, fixing derived values after construction.
    skip: a reason the model cannot run here at all.
    """

    config: dict[str, Any] = field(default_factory=dict)
    cls: str | None = None
    inputs: Callable[[Any, torch.Generator], dict] | None = None
    extra_inputs: Callable[[Any, torch.Generator], dict] | None = None
    make_config: Callable[[types.ModuleType], PretrainedConfig] | None = None
    post: Callable[[Any], None] | None = None
    skip: str | None = None


# The exceptions table of the installed transformers: `OVERRIDES` (the zoo, 4.34.0), or from
# transformers 5 `tiny_modern.OVERRIDES` (today's code, whose configs and inputs differ for the
# same model names), which tiny_modern.py installs here when it is imported (it builds on this
# module, so this one does not import it).
_installed_table: dict[str, Override] | None = None


def use_overrides(table: dict[str, Override]) -> None:
    global _installed_table
    _installed_table = table


def override_for(model: str) -> Override:
    """The exceptions for `model` in the table of the installed transformers."""
    if TRANSFORMERS_MAJOR >= 5 and _installed_table is None:
        raise RuntimeError("transformers 5 is installed: import evaluation.verify.tiny_modern, whose table it needs")
    return (_installed_table if _installed_table is not None else OVERRIDES).get(model, Override())


# --------------------------------------------------------------------------- config


def config_class_for(model: str, module: types.ModuleType | None = None) -> type[PretrainedConfig]:
    """The main config class: the `config_class` of the class `build` picks, else
    `_CONFIG_FOR_DOC`, else `configuration_<model>`, else CONFIG_MAPPING."""
    if module is not None:
        try:
            cls = model_class(model, module)
        except NotInstantiable:
            cls = None
        if cls is not None and isinstance(getattr(cls, "config_class", None), type):
            return cls.config_class
        name = getattr(module, "_CONFIG_FOR_DOC", None)
        if isinstance(name, str) and isinstance(getattr(module, name, None), type):
            return getattr(module, name)
    try:
        cfg_mod = importlib.import_module(f"transformers.models.{model}.configuration_{model}")
    except ModuleNotFoundError:
        cfg_mod = None
    if cfg_mod is not None:
        classes = [v for v in vars(cfg_mod).values()
                   if isinstance(v, type) and issubclass(v, PretrainedConfig) and v is not PretrainedConfig
                   and v.__module__ == cfg_mod.__name__]
        typed = [c for c in classes if getattr(c, "model_type", None) == model]
        if typed:
            return typed[0]
        if classes:
            return min(classes, key=lambda c: len(c.__name__))
    from transformers import CONFIG_MAPPING

    if model in CONFIG_MAPPING:
        return CONFIG_MAPPING[model]
    raise NotInstantiable(f"no config class found for {model}")


def _init_params(config_cls: type) -> dict[str, inspect.Parameter]:
    params = {}
    for name, p in inspect.signature(config_cls.__init__).parameters.items():
        if name == "self" or p.kind in (p.VAR_KEYWORD, p.VAR_POSITIONAL):
            continue
        params[name] = p
    return params


def _takes_dict(config_cls: type, name: str) -> bool:
    """Whether `config_cls(name=...)` wants a dict (CLIP-style `XConfig(**text_config)`)
    rather than a config object (backbone-style)."""
    try:
        source = inspect.getsource(config_cls.__init__)
    except (OSError, TypeError):
        return True
    return bool(re.search(rf"\(\*\*{name}\)|{name}\.(pop|get)\(|{name}\[", source))


def shrink_config(config_cls: type[PretrainedConfig], default: PretrainedConfig | None = None,
                  extra: dict[str, Any] | None = None) -> PretrainedConfig:
    """A tiny instance of `config_cls`.

    Top level (`default` None): the class's parameter defaults, shrunk by name. A
    sub-config (`default` given: the instance its parent built) keeps the values its parent
    chose (e.g. a backbone's `out_features`), shrunk by name. Sub-configs recurse. `extra`
    is applied last; dotted keys reach into sub-configs.
    """
    extra = dict(extra or {})
    plain = {k: v for k, v in extra.items() if "." not in k}
    top = default is None
    if top:
        try:
            default = config_cls(**plain)
        except Exception:  # noqa: BLE001 - the overrides may only make sense once shrunk
            try:
                default = config_cls()
            except Exception as exc:  # noqa: BLE001 - the reason is reported
                raise NotInstantiable(f"{config_cls.__name__}() fails with defaults: {type(exc).__name__}: {exc}") from exc
    params = _init_params(config_cls)
    kwargs: dict[str, Any] = {}
    for name, p in params.items():
        value = getattr(default, name, p.default)
        if isinstance(value, PretrainedConfig):
            sub_extra = {k.split(".", 1)[1]: v for k, v in extra.items() if k.startswith(name + ".")}
            tiny_sub = shrink_config(type(value), value, sub_extra)
            kwargs[name] = tiny_sub.to_dict() if _takes_dict(config_cls, name) else tiny_sub
            continue
        if top:
            value = p.default
        if value is inspect.Parameter.empty:
            continue
        kwargs[name] = shrink_value(name, value)
    # Per-layer lists (transformers 5: `layer_types`, one entry per layer) follow the shrunk
    # layer count: their first entries.
    layers = kwargs.get("num_hidden_layers")
    for name in ("layer_types",):
        value = kwargs.get(name)
        if _is_int(layers) and isinstance(value, (list, tuple)) and len(value) > layers:
            kwargs[name] = type(value)(value[:layers])
    # The vocabulary: small, but above every special token id.
    if _is_int(kwargs.get("vocab_size")):
        kwargs["vocab_size"] = min(kwargs["vocab_size"], max(99, _max_special(kwargs) + 1))
    kwargs.update(plain)
    try:
        config = config_cls(**kwargs)
    except ValueError as exc:
        if not any(k in kwargs for k in _BACKBONE_SELECTORS) or "out_" not in str(exc):
            raise NotInstantiable(f"{config_cls.__name__}(tiny) fails: {type(exc).__name__}: {exc}") from exc
        for k in _BACKBONE_SELECTORS:  # the parent's stage choice no longer exists: take the last
            if k not in plain:
                kwargs.pop(k, None)
        config = config_cls(**kwargs)
    except Exception as exc:  # noqa: BLE001
        raise NotInstantiable(f"{config_cls.__name__}(tiny) fails: {type(exc).__name__}: {exc}") from exc
    # Dotted keys for sub-configs that are not __init__ parameters (or set after it).
    for key, value in extra.items():
        if "." in key and key.split(".", 1)[0] not in params:
            _set_dotted(config, key, value)
    return config


def _set_dotted(config: Any, key: str, value: Any) -> None:
    parts = key.split(".")
    for part in parts[:-1]:
        config = getattr(config, part)
    setattr(config, parts[-1], value)


def tiny_of(model_type: str, **extra: Any) -> PretrainedConfig:
    """The tiny config of another model type (for composite models)."""
    from transformers import CONFIG_MAPPING

    return shrink_config(CONFIG_MAPPING[model_type], extra=extra)


def tiny_config(model: str, module: types.ModuleType | None = None, cls: type | None = None) -> PretrainedConfig:
    """The tiny config of `model` (module: the loaded modeling module; cls: the class to
    build, whose `config_class` says which config class to use)."""
    override = override_for(model)
    if override.skip:
        raise NotInstantiable(override.skip)
    if override.make_config is not None:
        config = override.make_config(module)
    else:
        config_cls = cls.config_class if cls is not None and isinstance(getattr(cls, "config_class", None), type) \
            else config_class_for(model, module)
        config = shrink_config(config_cls, extra=override.config)
    if override.post is not None:
        override.post(config)
    return config


# --------------------------------------------------------------------------- class choice


def _model_classes(module: types.ModuleType) -> list[type]:
    return [v for v in vars(module).values()
            if isinstance(v, type) and issubclass(v, PreTrainedModel) and v.__module__ == module.__name__]


def _has_forward(cls: type) -> bool:
    return cls.forward is not torch.nn.Module.forward


def _base_model_class(module: types.ModuleType) -> type:
    classes = [c for c in _model_classes(module) if not c.__name__.endswith("PreTrainedModel")]
    if not classes:
        raise NotInstantiable("the module defines no PreTrainedModel subclass to instantiate")
    with_forward = [c for c in classes if _has_forward(c)]
    if not with_forward:
        raise NotInstantiable(f"no class with a forward(): {', '.join(sorted(c.__name__ for c in classes))}")
    names = {c.__name__: c for c in with_forward}
    prefixes = [c.__name__[: -len("PreTrainedModel")] for c in _model_classes(module)
                if c.__name__.endswith("PreTrainedModel")]
    for prefix in prefixes:
        if prefix + "Model" in names:
            return names[prefix + "Model"]
    plain = [c for c in with_forward if c.__name__.endswith("Model") and "For" not in c.__name__
             and "Head" not in c.__name__]
    if plain:
        return min(plain, key=lambda c: len(c.__name__))
    return min(with_forward, key=lambda c: len(c.__name__))


def model_class(model: str, module: types.ModuleType, cls_name: str | None = None) -> type:
    """The class to build: `cls_name` when given, else the override's, else the base
    `<X>Model` of the file (falling back to another `...Model`, then any model class)."""
    override = override_for(model)
    if override.skip:
        raise NotInstantiable(override.skip)
    name = cls_name or override.cls
    if name:
        if not isinstance(getattr(module, name, None), type):
            raise NotInstantiable(f"class {name} not in the module")
        return getattr(module, name)
    return _base_model_class(module)


# --------------------------------------------------------------------------- inputs


def _sub(config: Any, *names: str) -> Any:
    for name in names:
        sub = getattr(config, name, None)
        if isinstance(sub, PretrainedConfig):
            return sub
    return config


def _vocab(config: Any) -> int:
    for name in ("vocab_size", "src_vocab_size", "input_vocab_size"):
        v = getattr(config, name, None)
        if _is_int(v) and v > 0:
            return v
    return 99


def ids(config: Any, gen: torch.Generator, seq: int = SEQ, batch: int = BATCH) -> torch.Tensor:
    """Random token ids in [3, min(vocab, 99)) (clear of the usual special ids 0..2)."""
    high = min(_vocab(config), 99)
    low = 3 if high > 10 else 0
    return torch.randint(low, high, (batch, seq), generator=gen)


def _image_size(config: Any) -> tuple[int, int]:
    size = getattr(config, "image_size", None)
    if _is_int(size):
        return size, size
    if _int_list(size) and len(size) == 2:
        return int(size[0]), int(size[1])
    return IMAGE, IMAGE


def pixels(config: Any, gen: torch.Generator, batch: int = BATCH, frames: int | None = None) -> torch.Tensor:
    h, w = _image_size(config)
    channels = getattr(config, "num_channels", 3)
    channels = channels if _is_int(channels) else 3
    if frames:
        return torch.randn(batch, frames, channels, h, w, generator=gen)
    return torch.randn(batch, channels, h, w, generator=gen)


def _bbox(gen: torch.Generator, seq: int = SEQ, batch: int = BATCH) -> torch.Tensor:
    a = torch.randint(0, 500, (batch, seq, 2), generator=gen)
    b = a + torch.randint(1, 400, (batch, seq, 2), generator=gen)
    return torch.stack([a[..., 0], a[..., 1], b[..., 0], b[..., 1]], dim=-1)


_MAIN_INPUTS = ("input_ids", "pixel_values", "input_values", "input_features", "decoder_input_ids", "bbox")


def generic_inputs(config: Any, cls: type, gen: torch.Generator, seq: int = SEQ,
                   given: dict | None = None, batch: int = BATCH) -> dict:
    """Inputs by `forward` parameter name: the main modality inputs it accepts, and every
    required parameter (or NotInstantiable naming the one no builder knows); `given`
    inputs are taken as they are."""
    params = {n: p for n, p in inspect.signature(cls.forward).parameters.items() if n != "self"}
    text = config if _is_int(getattr(config, "vocab_size", None)) else _sub(config, "text_config", "decoder")
    vision = _sub(config, "vision_config", "backbone_config", "encoder")
    inputs: dict[str, Any] = dict(given or {})
    for name, p in params.items():
        if name in inputs:
            continue
        required = p.default is inspect.Parameter.empty and p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL)
        if not required and name not in _MAIN_INPUTS:
            continue
        if name == "input_ids":
            inputs[name] = ids(text, gen, seq, batch)
        elif name == "decoder_input_ids":
            inputs[name] = ids(_sub(config, "decoder"), gen, seq, batch)
        elif name == "pixel_values":
            frames = getattr(vision, "num_frames", None)  # video models: (batch, frames, C, H, W)
            inputs[name] = pixels(vision, gen, batch, frames=frames if _is_int(frames) else None)
        elif name == "input_values":
            inputs[name] = torch.randn(batch, AUDIO_SAMPLES, generator=gen)
        elif name == "input_features":
            bins = getattr(config, "num_mel_bins", None) or 80
            inputs[name] = torch.randn(batch, bins, 2 * getattr(config, "max_source_positions", 16), generator=gen)
        elif name == "bbox":
            inputs[name] = _bbox(gen, seq, batch)
        elif required:
            raise NotInstantiable(f"{cls.__name__}.forward needs `{name}` and no input builder knows it")
    if not inputs:
        raise NotInstantiable(f"no known input among {cls.__name__}.forward parameters {list(params)}")
    return inputs


def example_inputs(model: str, config: Any, module: types.ModuleType, cls: type | None = None,
                   seed: int = 0) -> dict:
    """Valid random inputs for the class `cls` (default: the class `build` picks)."""
    cls = cls or model_class(model, module)
    gen = torch.Generator().manual_seed(seed)
    override = override_for(model)
    if override.inputs is not None:
        return _accepted(cls, override.inputs(config, gen))
    extra = override.extra_inputs(config, gen) if override.extra_inputs is not None else {}
    return generic_inputs(config, cls, gen, given=_accepted(cls, extra))


def _accepted(cls: type, inputs: dict) -> dict:
    """The inputs `cls.forward` takes (an override written for one class of a file may
    offer more than another class of it accepts)."""
    params = inspect.signature(cls.forward).parameters
    if any(p.kind is p.VAR_KEYWORD for p in params.values()):
        return inputs
    return {k: v for k, v in inputs.items() if k in params}


# --------------------------------------------------------------------------- build

_REQUIRES = re.compile(r"requires the ([\w.-]+) library", re.I)


def build(model: str, module: types.ModuleType, seed: int = 0,
          cls_name: str | None = None, config_extra: dict | None = None,
          train: bool = False) -> tuple[torch.nn.Module, dict]:
    """(tiny random model in eval mode, inputs) for `model` from the loaded `module`;
    `cls_name` picks another class of the file (e.g. `BertForMaskedLM`, to run a head
    that the base model does not contain); `config_extra` sets config values (dotted keys)
    after shrinking, e.g. to take the other side of an `if config.x:`. With `train` the
    model is in training mode with every dropout-like probability set to zero."""
    cls = model_class(model, module, cls_name)
    config = tiny_config(model, module, cls)
    if train:
        _zero_random_config(config)
    for key, value in (config_extra or {}).items():
        _set_dotted(config, key, value)
    torch.manual_seed(seed)
    try:
        net = cls(config)
    except ImportError as exc:
        found = _REQUIRES.search(str(exc))
        what = found.group(1) if found else str(exc).strip().splitlines()[0]
        raise NotInstantiable(f"{cls.__name__} needs {what}, which is not installed") from exc
    if train:
        _zero_dropout_modules(net)
        net.train()
    else:
        net.eval()
    if not issubclass(cls, PreTrainedModel):
        return net, layer_inputs(net, config, cls, seed)
    return net, example_inputs(model, config, module, cls, seed)


def layer_inputs(net: torch.nn.Module, config: Any, cls: type, seed: int = 0) -> dict:
    """Random (batch, seq, width) tensors for a layer built alone (`cls(config)`): the first
    `forward` parameter is as wide as the layer's first Linear/LayerNorm input, the
    other required ones (residual inputs) as wide as the hidden size."""
    params = [p for n, p in inspect.signature(cls.forward).parameters.items() if n != "self"]
    required = [p for p in params if p.default is inspect.Parameter.empty
                and p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL)]
    hidden = next((getattr(config, n) for n in ("hidden_size", "d_model", "dim") if _is_int(getattr(config, n, None))), None)
    first = next((m for m in net.modules() if isinstance(m, (torch.nn.Linear, torch.nn.LayerNorm))), None)
    if not required or hidden is None or first is None:
        raise NotInstantiable(f"{cls.__name__} alone: no tensor inputs to build for {[p.name for p in params]}")
    width = first.in_features if isinstance(first, torch.nn.Linear) else first.normalized_shape[-1]
    gen = torch.Generator().manual_seed(seed)
    return {p.name: torch.randn(BATCH, SEQ, width if i == 0 else hidden, generator=gen)
            for i, p in enumerate(required)}


# Config values that make training mode random: dropout, drop-path, layer-drop, router
# jitter, SpecAugment masking.
_RANDOM_CONFIG = re.compile(r"drop|jitter|mask_time_prob|mask_feature_prob", re.I)


def _zero_random_config(config: Any) -> None:
    for key, value in list(vars(config).items()):
        if isinstance(value, PretrainedConfig):
            _zero_random_config(value)
        elif isinstance(value, float) and _RANDOM_CONFIG.search(key):
            setattr(config, key, 0.0)


def _zero_dropout_modules(net: torch.nn.Module) -> None:
    """Dropout probabilities written as literals in the code (not read from the config)."""
    for module in net.modules():
        if isinstance(module, torch.nn.modules.dropout._DropoutNd):
            module.p = 0.0
        if isinstance(getattr(module, "drop_prob", None), float):  # DropPath
            module.drop_prob = 0.0


# --------------------------------------------------------------------------- the table

def _encoder_decoder(module: types.ModuleType) -> PretrainedConfig:
    return module.EncoderDecoderConfig.from_encoder_decoder_configs(tiny_of("bert"), tiny_of("bert"))


def _time_series(prediction_length: int = 4, context_length: int = 8, **config: Any) -> Override:
    lags = [1, 2, 3]

    def inputs(config: Any, gen: torch.Generator) -> dict:
        past = context_length + max(lags)
        nt = config.num_time_features
        return {
            "past_values": torch.randn(BATCH, past, generator=gen),
            "past_time_features": torch.randn(BATCH, past, nt, generator=gen),
            "past_observed_mask": torch.ones(BATCH, past),
            "future_values": torch.randn(BATCH, prediction_length, generator=gen),
            "future_time_features": torch.randn(BATCH, prediction_length, nt, generator=gen),
        }

    return Override(config={"prediction_length": prediction_length, "context_length": context_length,
                            "lags_sequence": lags, "num_time_features": 1, **config}, inputs=inputs)


def _graphormer_inputs(config: Any, gen: torch.Generator) -> dict:
    n, d = 6, config.multi_hop_max_dist
    return {
        "input_nodes": torch.randint(1, 50, (BATCH, n, 1), generator=gen),
        "input_edges": torch.randint(1, 50, (BATCH, n, n, d, 1), generator=gen),
        "attn_bias": torch.zeros(BATCH, n + 1, n + 1),
        "in_degree": torch.randint(1, 5, (BATCH, n), generator=gen),
        "out_degree": torch.randint(1, 5, (BATCH, n), generator=gen),
        "spatial_pos": torch.randint(1, 5, (BATCH, n, n), generator=gen),
        "attn_edge_type": torch.randint(1, 50, (BATCH, n, n, 1), generator=gen),
    }


def _rag_config(module: types.ModuleType) -> PretrainedConfig:
    return module.RagConfig.from_question_encoder_generator_configs(
        tiny_of("dpr"), tiny_of("bart"), n_docs=2)


def _rag_inputs(config: Any, gen: torch.Generator) -> dict:
    n = config.n_docs
    return {
        "context_input_ids": ids(config.generator, gen, batch=BATCH * n),
        "context_attention_mask": torch.ones(BATCH * n, SEQ, dtype=torch.long),
        "doc_scores": torch.randn(BATCH, n, generator=gen),
        "decoder_input_ids": ids(config.generator, gen),
    }


def _pix2struct_inputs(config: Any, gen: torch.Generator) -> dict:
    patches = 16
    rows = torch.arange(patches).div(4, rounding_mode="floor").float() + 1
    cols = torch.arange(patches).remainder(4).float() + 1
    body = torch.randn(BATCH, patches, config.vision_config.patch_embed_hidden_size, generator=gen)
    pos = torch.stack([rows, cols], dim=-1).expand(BATCH, patches, 2)
    return {"flattened_patches": torch.cat([pos, body], dim=-1),
            "attention_mask": torch.ones(BATCH, patches),
            "decoder_input_ids": ids(config.text_config, gen)}


def _sam_post(config: Any) -> None:
    config.prompt_encoder_config.image_size = config.vision_config.image_size
    config.prompt_encoder_config.image_embedding_size = config.vision_config.image_size // config.vision_config.patch_size


def _hybrid_post(config: Any) -> None:
    backbone = config.backbone_config
    stage = backbone.out_features[-1]
    config.backbone_featmap_shape = [1, backbone.hidden_sizes[backbone.stage_names.index(stage) - 1], 4, 4]


def _upernet_post(config: Any) -> None:
    config.auxiliary_in_channels = config.backbone_config.hidden_sizes[2]


OVERRIDES: dict[str, Override] = {
    # composite models: tiny sub-models of common types
    "encoder_decoder": Override(make_config=_encoder_decoder),
    "vision_encoder_decoder": Override(
        make_config=lambda m: m.VisionEncoderDecoderConfig.from_encoder_decoder_configs(tiny_of("vit"), tiny_of("bert"))),
    "vision_text_dual_encoder": Override(
        make_config=lambda m: m.VisionTextDualEncoderConfig.from_vision_text_configs(tiny_of("vit"), tiny_of("bert"), projection_dim=HIDDEN)),
    "rag": Override(make_config=_rag_config, inputs=_rag_inputs),
    # DETR family: the transformers backbone (ResNet) instead of timm
    "detr": Override(config={"use_timm_backbone": False}),
    "conditional_detr": Override(config={"use_timm_backbone": False}),
    "deformable_detr": Override(config={"use_timm_backbone": False}),
    "table_transformer": Override(config={"use_timm_backbone": False}),
    # divisibility and derived sizes
    "bridgetower": Override(config={"hidden_size": 64, "text_config.hidden_size": 64, "vision_config.hidden_size": 64}),
    "bros": Override(config={"hidden_size": 64}),
    "lilt": Override(config={"hidden_size": 24}),
    "efficientformer": Override(config={"hidden_sizes": [16, 16, 32, 32], "dim": 32, "resolution": 2}),
    "efficientnet": Override(config={"hidden_dim": 2560}),
    "align": Override(config={"projection_dim": 640}),
    "codegen": Override(config={"n_head": 4}),
    "cvt": Override(config={"depth": [1, 2, 3]}),  # stage i indexes drop_path_rates[i] of depth[i] items
    "layoutlmv3": Override(config={"coordinate_size": 4, "shape_size": 8, "input_size": IMAGE}),
    "vit_hybrid": Override(post=_hybrid_post),
    "gpt_neo": Override(config={"num_layers": 2, "attention_types": [[["global", "local"], 1]]}),
    "reformer": Override(config={"axial_pos_embds_dim": [16, 16], "axial_pos_shape": [4, 4],
                                 "local_attn_chunk_length": 4, "lsh_attn_chunk_length": 4,
                                 "attn_layers": ["local", "lsh"], "num_buckets": 2}),
    "transfo_xl": Override(config={"cutoffs": [20, 40], "div_val": 2}),
    "esm": Override(config={"vocab_size": 33, "pad_token_id": 1}),
    "xmod": Override(config={"default_language": "en_XX"}),
    "swin": Override(config={"window_size": 2}),
    "upernet": Override(post=_upernet_post),
    "sam": Override(config={"vision_config.num_pos_feats": 16, "vision_config.global_attn_indexes": [1],
                            "vision_config.mlp_dim": 64}, post=_sam_post),
    # inputs that are not input_ids / pixel_values / input_values
    "audio_spectrogram_transformer": Override(
        config={"max_length": 64, "num_mel_bins": 32},
        inputs=lambda c, g: {"input_values": torch.randn(BATCH, c.max_length, c.num_mel_bins, generator=g)}),
    "autoformer": _time_series(label_length=4),
    "informer": _time_series(),
    "time_series_transformer": _time_series(),
    "graphormer": Override(inputs=_graphormer_inputs),
    "idefics": Override(extra_inputs=lambda c, g: {
        "pixel_values": pixels(c.vision_config, g, frames=1),
        "image_attention_mask": torch.ones(BATCH, SEQ, 1, dtype=torch.long)}),
    "lxmert": Override(extra_inputs=lambda c, g: {
        "visual_feats": torch.randn(BATCH, 4, c.visual_feat_dim, generator=g),
        "visual_pos": torch.rand(BATCH, 4, c.visual_pos_dim, generator=g)}),
    "musicgen": Override(inputs=lambda c, g: {"input_ids": ids(c, g, batch=BATCH * c.num_codebooks)}),
    "oneformer": Override(extra_inputs=lambda c, g: {"task_inputs": ids(c, g, seq=c.task_seq_len).float()}),
    "pix2struct": Override(cls="Pix2StructForConditionalGeneration", inputs=_pix2struct_inputs),
    "pop2piano": Override(cls="Pop2PianoForConditionalGeneration",
                          inputs=lambda c, g: {"input_ids": ids(c, g), "decoder_input_ids": ids(c, g)}),
    "speech_to_text": Override(inputs=lambda c, g: {
        "input_features": torch.randn(BATCH, 32, c.input_feat_per_channel * c.input_channels, generator=g),
        "decoder_input_ids": ids(c, g)}),
    "speecht5": Override(inputs=lambda c, g: {
        "input_values": torch.randn(BATCH, SEQ, c.hidden_size, generator=g),
        "decoder_input_values": torch.randn(BATCH, SEQ, c.hidden_size, generator=g)}),
    "tvlt": Override(config={"frequency_length": 32, "spectrogram_length": 64}, inputs=lambda c, g: {
        "pixel_values": pixels(c, g, frames=c.num_frames),
        "audio_values": torch.randn(BATCH, 1, c.spectrogram_length, c.frequency_length, generator=g)}),
    "encodec": Override(inputs=lambda c, g: {"input_values": torch.randn(BATCH, c.audio_channels, AUDIO_SAMPLES, generator=g)}),
    "clap": Override(config={"audio_config.spec_size": 64, "audio_config.num_mel_bins": 32,
                             "audio_config.window_size": 2, "audio_config.patch_embeds_hidden_size": 16,
                             "audio_config.hidden_size": 128},
                     extra_inputs=lambda c, g: {"input_features": torch.randn(BATCH, 1, 64, 32, generator=g)}),
    "perceiver": Override(inputs=lambda c, g: {"inputs": torch.randn(BATCH, SEQ, c.d_model, generator=g)}),
    "speech_encoder_decoder": Override(
        make_config=lambda m: m.SpeechEncoderDecoderConfig.from_encoder_decoder_configs(tiny_of("wav2vec2"), tiny_of("bert")),
        inputs=lambda c, g: {"input_values": torch.randn(BATCH, AUDIO_SAMPLES, generator=g),
                             "decoder_input_ids": ids(c.decoder, g)}),
    "jukebox": Override(cls="JukeboxVQVAE",
                        inputs=lambda c, g: {"raw_audio": torch.randn(BATCH, 256, 1, generator=g)}),
    # the class that runs the whole file, not the first `<X>Model` found
    "instructblip": Override(cls="InstructBlipForConditionalGeneration", extra_inputs=lambda c, g: {
        "qformer_input_ids": ids(c.qformer_config, g),
        "input_ids": ids(c.text_config, g)}),
    "decision_transformer": Override(cls="DecisionTransformerModel", inputs=lambda c, g: {
        "states": torch.randn(BATCH, SEQ, c.state_dim, generator=g),
        "actions": torch.randn(BATCH, SEQ, c.act_dim, generator=g),
        "rewards": torch.randn(BATCH, SEQ, 1, generator=g),
        "returns_to_go": torch.randn(BATCH, SEQ, 1, generator=g),
        "timesteps": torch.randint(0, 100, (BATCH, SEQ), generator=g),
        "attention_mask": torch.ones(BATCH, SEQ, dtype=torch.long)}),
    # no forward on the top-level class: the sub-models that carry the file's layers
    "bark": Override(cls="BarkSemanticModel"),
}
