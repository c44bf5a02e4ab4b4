# Adapt from https://github.com/NVIDIA/Megatron-LM/blob/b1efb3c7126ef7615e8c333432d76e08038e17ff/pretrain_gpt.py
import argparse
import inspect
import logging
from contextlib import nullcontext
from typing import Literal

import torch
from megatron.core import tensor_parallel
from megatron.core.models.gpt import GPTModel
from megatron.core.models.gpt.gpt_layer_specs import (
    get_gpt_decoder_block_spec,
    get_gpt_layer_local_spec,
    get_gpt_layer_with_transformer_engine_spec,
)
from megatron.core.transformer.spec_utils import import_module
from megatron.core.transformer.transformer_config import TransformerConfig
from megatron.training.arguments import core_transformer_config_from_args

from miles.utils.audit_utils.witness.module import install_witness
from miles.utils.misc import load_function
from miles.utils.replay_base import routing_replay_manager

logger = logging.getLogger(__name__)


def _apply_bridge_runtime_config(provider, args: argparse.Namespace) -> None:
    """Copy the runtime config from args onto a bridge-built provider.

    Bridge mode builds the model from the HF checkpoint and skips
    core_transformer_config_from_args, so command-line args never reach the
    provider. We copy only some fields, not all of args: the provider already
    holds the right values from the HF checkpoint, while args only has default
    values for model shape, dtype, and fields the provider set on purpose.
    Copying those would quietly break the model -- the bridge only logs a
    warning and keeps going, it does not fail. So we copy just the training,
    parallelism, memory, and numerics settings that really come from args. Put
    new training flags here, not spread across the code.
    """
    # parallelism / sharding
    provider.tensor_model_parallel_size = args.tensor_model_parallel_size
    provider.pipeline_model_parallel_size = args.pipeline_model_parallel_size
    provider.expert_model_parallel_size = args.expert_model_parallel_size
    provider.expert_tensor_parallel_size = args.expert_tensor_parallel_size
    provider.sequence_parallel = args.sequence_parallel
    provider.context_parallel_size = args.context_parallel_size

    # loss / sequence handling
    provider.calculate_per_token_loss = args.calculate_per_token_loss  # CP>1 VL models assert this
    provider.variable_seq_lengths = args.variable_seq_lengths

    # numerics (training infra, not model-defining)
    provider.attention_softmax_in_fp32 = args.attention_softmax_in_fp32
    provider.fp32_residual_connection = args.fp32_residual_connection
    provider.deterministic_mode = args.deterministic_mode

    # activation recompute (silently dropped before -> no checkpointing -> OOM at long context)
    provider.recompute_granularity = args.recompute_granularity
    provider.recompute_method = args.recompute_method
    provider.recompute_num_layers = args.recompute_num_layers
    provider.recompute_modules = args.recompute_modules

    # activation / memory offload
    provider.cpu_offloading_num_layers = args.cpu_offloading_num_layers
    provider.distribute_saved_activations = args.distribute_saved_activations
    # cpu_offloading is derived, set only when cpu_offloading_num_layers>0; guard its presence.
    if hasattr(args, "cpu_offloading"):
        provider.cpu_offloading = args.cpu_offloading

    # communication overlap
    provider.tp_comm_overlap = args.tp_comm_overlap

    # fp8
    provider.fp8 = args.fp8
    provider.fp8_recipe = args.fp8_recipe

    # attention kernel selection
    provider.attention_backend = args.attention_backend

    # MoE token dispatcher (same-name, always present)
    provider.moe_token_dispatcher_type = args.moe_token_dispatcher_type

    # arg name != provider field; arg default None, so propagate only when the user set it
    if getattr(args, "decoder_first_pipeline_num_layers", None) is not None:
        provider.num_layers_in_first_pipeline_stage = args.decoder_first_pipeline_num_layers
    if getattr(args, "decoder_last_pipeline_num_layers", None) is not None:
        provider.num_layers_in_last_pipeline_stage = args.decoder_last_pipeline_num_layers

    # MoE training knobs: override only when explicitly set, else keep the provider's value
    if getattr(args, "moe_router_bias_update_rate", None) is not None:
        provider.moe_router_bias_update_rate = args.moe_router_bias_update_rate
    if getattr(args, "moe_aux_loss_coeff", None) is not None:
        provider.moe_aux_loss_coeff = args.moe_aux_loss_coeff

    if hasattr(provider, "dsa_attention_backend"):
        provider.dsa_attention_backend = getattr(args, "dsa_attention_backend", "megatron")


# Adapt from https://github.com/volcengine/verl/blob/c3b20575d2bc815fcccd84bddb4c0401fc4b632b/verl/models/llama/megatron/layers/parallel_linear.py#L82
class LinearForLastLayer(torch.nn.Linear):
    def __init__(
        self,
        input_size: int,
        output_size: int,
        *,
        config: TransformerConfig,
        bias: bool = True,
    ) -> None:
        super().__init__(in_features=input_size, out_features=output_size, bias=bias)
        self.sequence_parallel = config.sequence_parallel
        if self.sequence_parallel:
            self.weight.sequence_parallel = True

        self.weight.data.normal_(mean=0.0, std=0.02)
        if bias:
            self.bias.data.zero_()

    def forward(
        self,
        input_: torch.Tensor,
        weight: torch.Tensor | None = None,
        runtime_gather_output: bool | None = None,
    ) -> tuple[torch.Tensor, None]:
        logits = super().forward(input_)
        logits = logits.float()
        if self.sequence_parallel:
            logits = tensor_parallel.gather_from_sequence_parallel_region(logits, tensor_parallel_output_grad=False)
        return logits, None


def get_model_provider_func(
    args: argparse.Namespace,
    role: Literal["actor", "critic"] = "actor",
):
    # Support custom model provider path (similar to --custom-rm-path for reward models)
    if getattr(args, "custom_model_provider_path", None):

        def wrapped_model_provider(
            pre_process: bool = True,
            post_process: bool = True,
            vp_stage: int | None = None,
            config: TransformerConfig | None = None,
            pg_collection=None,
        ) -> GPTModel:
            assert config is None, "miles builds the config from args, so it expects config to be None"
            custom_model_provider = load_function(args.custom_model_provider_path)
            # Check if the custom provider supports vp_stage parameter
            has_vp_stage = "vp_stage" in inspect.signature(custom_model_provider).parameters
            if has_vp_stage:
                model = custom_model_provider(pre_process=pre_process, post_process=post_process, vp_stage=vp_stage)
            else:
                model = custom_model_provider(pre_process=pre_process, post_process=post_process)
            # Apply critic output layer if needed
            if post_process and role == "critic":
                model.output_layer = LinearForLastLayer(
                    input_size=model.config.hidden_size, output_size=1, config=model.config
                )
            _maybe_install_witness(args, model)
            return model

        return wrapped_model_provider

    if args.megatron_to_hf_mode == "bridge":
        from megatron.bridge import AutoBridge

        bridge = AutoBridge.from_hf_pretrained(args.hf_checkpoint, trust_remote_code=True)
        provider = bridge.to_megatron_provider(load_weights=False)
        _apply_bridge_runtime_config(provider, args)
        provider.finalize()

        def wrapped_bridge_provider(
            pre_process: bool = True,
            post_process: bool = True,
            vp_stage: int | None = None,
            config: TransformerConfig | None = None,
            pg_collection=None,
        ) -> GPTModel:
            assert config is None, "miles builds the config from args, so it expects config to be None"
            # PP>1 paths in megatron.bridge providers (e.g. mamba_provider) read
            # self._pg_collection.pp during provide(); without forwarding the
            # caller's pg_collection here, those code paths hit AttributeError.
            if pg_collection is not None:
                provider._pg_collection = pg_collection
            model = provider.provide(pre_process=pre_process, post_process=post_process, vp_stage=vp_stage)
            assert not getattr(args, "enable_witness", False), "Witness is not supported yet in this mode"
            # Gemma-4 forward returns (logits, loss_mask); keep logits only.
            _bridge_forward = model.forward

            def _logits_only_forward(*args, **kwargs):
                out = _bridge_forward(*args, **kwargs)
                return out[0] if isinstance(out, tuple) else out

            model.forward = _logits_only_forward
            return model

        return wrapped_bridge_provider

    def model_provider(
        pre_process: bool = True,
        post_process: bool = True,
        vp_stage: int | None = None,
        config: TransformerConfig | None = None,
        pg_collection=None,
    ) -> GPTModel:
        """Builds the model.

        If you set the use_legacy_models to True, it will return the legacy GPT model and if not the mcore GPT model.

        Args:
            pre_process (bool, optional): Set to true if you need to compute embedings. Defaults to True.
            post_process (bool, optional): Set to true if you need to want to compute output logits/loss. Defaults to True.


        Returns:
            Union[GPTModel, megatron.legacy.model.GPTModel]: The returned model
        """
        use_te = args.transformer_impl == "transformer_engine"

        # Experimental loading arguments from yaml
        assert config is None, "miles builds the config from args, so it expects config to be None"
        config = core_transformer_config_from_args(args)

        if args.spec is not None:
            transformer_layer_spec = import_module(args.spec)
            # Allow the spec to be a function so that user can use customized Megatron easier.
            if callable(transformer_layer_spec):
                transformer_layer_spec = transformer_layer_spec(args, config, vp_stage)
        else:
            if args.num_experts:
                # Define the decoder block spec
                kwargs = {
                    "use_transformer_engine": use_te,
                }
                if vp_stage is not None:
                    kwargs["vp_stage"] = vp_stage
                transformer_layer_spec = get_gpt_decoder_block_spec(config, **kwargs)
            else:
                # Define the decoder layer spec
                if use_te:
                    transformer_layer_spec = get_gpt_layer_with_transformer_engine_spec(
                        num_experts=args.num_experts,
                        moe_grouped_gemm=args.moe_grouped_gemm,
                        qk_layernorm=args.qk_layernorm,
                        multi_latent_attention=args.multi_latent_attention,
                        moe_use_legacy_grouped_gemm=args.moe_use_legacy_grouped_gemm,
                    )
                else:
                    transformer_layer_spec = get_gpt_layer_local_spec(
                        num_experts=args.num_experts,
                        moe_grouped_gemm=args.moe_grouped_gemm,
                        qk_layernorm=args.qk_layernorm,
                        multi_latent_attention=args.multi_latent_attention,
                        moe_use_legacy_grouped_gemm=args.moe_use_legacy_grouped_gemm,
                        normalization=args.normalization,
                        use_kitchen=config.use_kitchen,
                        use_true_on_policy_backend=config.true_on_policy_contract is not None,
                        use_kitchen_attention=config.use_kitchen_attention,
                        kitchen_attention_backend=config.kitchen_attention_backend,
                    )

        build_model_context = nullcontext
        build_model_context_args = {}
        if args.fp8_param_gather:
            try:
                from transformer_engine.pytorch import fp8_model_init

                build_model_context = fp8_model_init
                build_model_context_args["enabled"] = True

                # Check if fp8_model_init supports preserve_high_precision_init_val
                if "preserve_high_precision_init_val" in inspect.signature(fp8_model_init).parameters:
                    build_model_context_args["preserve_high_precision_init_val"] = True
            except Exception as e:
                raise RuntimeError(
                    "--fp8-param-gather requires `fp8_model_init` from TransformerEngine, but not found."
                ) from e

        kwargs = {
            "config": config,
            "transformer_layer_spec": transformer_layer_spec,
            "vocab_size": args.padded_vocab_size,
            "max_sequence_length": args.max_position_embeddings,
            "pre_process": pre_process,
            "post_process": post_process,
            "fp16_lm_cross_entropy": args.fp16_lm_cross_entropy,
            "parallel_output": True,
            "share_embeddings_and_output_weights": role != "critic" and not args.untie_embeddings_and_output_weights,
            "position_embedding_type": args.position_embedding_type,
            "rotary_percent": args.rotary_percent,
            "rotary_base": args.rotary_base,
            "rope_scaling": args.use_rope_scaling,
        }

        if vp_stage is not None:
            kwargs["vp_stage"] = vp_stage

        if args.mtp_num_layers:
            from megatron.core.models.gpt.gpt_layer_specs import get_gpt_mtp_block_spec

            mtp_kwargs = {
                "use_transformer_engine": use_te,
            }
            if vp_stage is not None:
                mtp_kwargs["vp_stage"] = vp_stage

            # hard code here to skip r3 registration for mtp layers
            # getattr is required to avoid ckpt conversion errors
            if getattr(args, "use_rollout_routing_replay", False):
                prev_routing_replay_enabled = routing_replay_manager.enabled
                routing_replay_manager.enabled = False
                logger.warning(
                    "Rollout routing replay is not applicable for MTP modules, so skipped replay registration"
                )
            mtp_block_spec = get_gpt_mtp_block_spec(config, transformer_layer_spec, **mtp_kwargs)
            kwargs["mtp_block_spec"] = mtp_block_spec
            if getattr(args, "use_rollout_routing_replay", False):
                # restore instead of forcing True: the critic role keeps the manager disabled
                routing_replay_manager.enabled = prev_routing_replay_enabled

        with build_model_context(**build_model_context_args):
            model = GPTModel(**kwargs)

        if post_process and role == "critic":
            model.output_layer = LinearForLastLayer(input_size=config.hidden_size, output_size=1, config=config)

        _maybe_install_witness(args, model)

        return model

    return model_provider


def _maybe_install_witness(
    args: argparse.Namespace,
    model: GPTModel,
) -> None:
    if getattr(args, "enable_witness", False):
        install_witness(
            model,
            buffer_size=args.witness_buffer_size,
            sequence_parallel=getattr(model.config, "sequence_parallel", False),
        )
