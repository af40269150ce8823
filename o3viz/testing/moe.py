"""Tiny random-weight mixture-of-experts models of every family the routing capture is tested on,
shared by the parity tests and ``benchmarks/internals.py``. Random tiny routers are nearly flat,
so ``sharpen_routers`` scales them until the choice of experts is clear-cut.

These weights are random: routing recorded on them says nothing about a trained model.
"""

from __future__ import annotations

COMMON = dict(
    hidden_size=32,
    intermediate_size=64,
    num_hidden_layers=2,
    num_attention_heads=4,
    num_key_value_heads=2,
    head_dim=8,
    vocab_size=128,
    max_position_embeddings=256,
    num_experts_per_tok=2,
    tie_word_embeddings=False,
)

_SHARED = {
    "n_routed_experts": 8,
    "moe_intermediate_size": 32,
    "n_shared_experts": 1,
    "first_k_dense_replace": 0,
}
_MLA = {
    **_SHARED,
    "num_key_value_heads": 4,
    "kv_lora_rank": 16,
    "q_lora_rank": 16,
    "qk_rope_head_dim": 8,
    "qk_nope_head_dim": 8,
    "v_head_dim": 8,
}

# family -> (module in transformers.models, config class, model class, family-specific settings)
FAMILIES: dict[str, tuple[str, str, str, dict]] = {
    "mixtral": ("mixtral", "MixtralConfig", "MixtralForCausalLM", {"num_local_experts": 8}),
    "qwen2_moe": (
        "qwen2_moe",
        "Qwen2MoeConfig",
        "Qwen2MoeForCausalLM",
        {"num_experts": 8, "moe_intermediate_size": 32, "shared_expert_intermediate_size": 32},
    ),
    "qwen3_moe": (
        "qwen3_moe",
        "Qwen3MoeConfig",
        "Qwen3MoeForCausalLM",
        {"num_experts": 8, "moe_intermediate_size": 32, "norm_topk_prob": True},
    ),
    "olmoe": (
        "olmoe",
        "OlmoeConfig",
        "OlmoeForCausalLM",
        {"num_experts": 8, "eos_token_id": 127, "pad_token_id": 1},
    ),
    "granitemoe": ("granitemoe", "GraniteMoeConfig", "GraniteMoeForCausalLM", {"num_local_experts": 8}),
    "gpt_oss": (
        "gpt_oss",
        "GptOssConfig",
        "GptOssForCausalLM",
        {
            "num_local_experts": 8,
            "sliding_window": 16,
            "layer_types": ["sliding_attention", "full_attention"],
        },
    ),
    "deepseek_v3": (
        "deepseek_v3",
        "DeepseekV3Config",
        "DeepseekV3ForCausalLM",
        {
            "n_routed_experts": 8,
            "moe_intermediate_size": 32,
            "n_shared_experts": 1,
            "num_key_value_heads": 4,
            "first_k_dense_replace": 0,
            "n_group": 2,
            "topk_group": 1,
            "kv_lora_rank": 16,
            "q_lora_rank": 16,
            "qk_rope_head_dim": 8,
            "qk_nope_head_dim": 8,
            "v_head_dim": 8,
        },
    ),
    "granitemoeshared": (
        "granitemoeshared",
        "GraniteMoeSharedConfig",
        "GraniteMoeSharedForCausalLM",
        {"num_local_experts": 8, "shared_intermediate_size": 32},
    ),
    "deepseek_v2": (
        "deepseek_v2",
        "DeepseekV2Config",
        "DeepseekV2ForCausalLM",
        {**_MLA, "n_group": 1, "topk_group": 1},
    ),
    "glm4_moe": (
        "glm4_moe",
        "Glm4MoeConfig",
        "Glm4MoeForCausalLM",
        {**_SHARED, "n_group": 1, "topk_group": 1},
    ),
    "dots1": ("dots1", "Dots1Config", "Dots1ForCausalLM", {**_SHARED, "n_group": 1, "topk_group": 1}),
    "hunyuan_v1_moe": (
        "hunyuan_v1_moe",
        "HunYuanMoEV1Config",
        "HunYuanMoEV1ForCausalLM",
        {"num_experts": 8, "moe_topk": 2},
    ),
    "ernie4_5_moe": (
        "ernie4_5_moe",
        "Ernie4_5_MoeConfig",
        "Ernie4_5_MoeForCausalLM",
        {"moe_num_experts": 8, "moe_k": 2, "moe_intermediate_size": 32, "moe_layer_start_index": 0},
    ),
    "phimoe": ("phimoe", "PhimoeConfig", "PhimoeForCausalLM", {"num_local_experts": 8}),
    "flex_olmo": (
        "flex_olmo",
        "FlexOlmoConfig",
        "FlexOlmoForCausalLM",
        {"num_experts": 8, "eos_token_id": 127, "pad_token_id": 1},
    ),
    "qwen3_next": (
        "qwen3_next",
        "Qwen3NextConfig",
        "Qwen3NextForCausalLM",
        {
            "num_experts": 8,
            "moe_intermediate_size": 32,
            "shared_expert_intermediate_size": 32,
            "layer_types": ["full_attention", "full_attention"],
        },
    ),
    "lfm2_moe": (
        "lfm2_moe",
        "Lfm2MoeConfig",
        "Lfm2MoeForCausalLM",
        {
            "num_experts": 8,
            "moe_intermediate_size": 32,
            "num_dense_layers": 0,
            "layer_types": ["full_attention", "full_attention"],
        },
    ),
}


def tiny_moe(family: str, seed: int = 0, sharpen: float = 4.0):
    """A tiny random ``family`` model in eval mode with sharpened routers."""
    import importlib

    import torch

    module, config_name, model_name, extra = FAMILIES[family]
    mod = importlib.import_module(f"transformers.models.{module}")
    cfg = getattr(mod, config_name)(**{**COMMON, **extra})
    torch.manual_seed(seed)
    model = getattr(mod, model_name)(cfg).eval()
    sharpen_routers(model, sharpen, seed)
    model.o3viz_routing_source = "random"  # routing recorded on it is labelled random-weight
    return model


def sharpen_routers(model, scale: float, seed: int = 0) -> None:
    """Give each router weights of norm ``scale`` per expert row (random directions), plus a random
    correction bias where the router has one, so routing is decisive and not just its init."""
    import torch

    from o3viz.hooks.routing import find_routers

    g = torch.Generator().manual_seed(seed + 1)
    with torch.no_grad():
        for site in find_routers(model):
            w = next(p for n, p in site.module.named_parameters() if n.endswith("weight"))
            fresh = torch.randn(w.shape, generator=g)
            w.copy_(fresh / fresh.norm(dim=-1, keepdim=True) * scale * w.shape[-1] ** 0.5 / 4)
            bias = getattr(site.module, "e_score_correction_bias", None)
            if bias is not None:
                bias.copy_(torch.rand(bias.shape, generator=g) * 0.2)
