"""Hierarchical context parallelism in a Megatron-Bridge recipe, enabled as Bridge's HCP guide shows."""
from megatron.bridge.recipes.llama import llama3_8b_pretrain_config
from megatron.bridge.training.config import ConfigContainer


def pretrain_config() -> ConfigContainer:
    cfg = llama3_8b_pretrain_config()
    cfg.model.context_parallel_size = 4
    cfg.model.cp_comm_type = "a2a+p2p"
    cfg.model.hierarchical_context_parallel_sizes = [2, 2]  # a2a inside the node, p2p ring across nodes
    cfg.model.seq_length = 16384
    cfg.dataset.seq_length = 16384
    cfg.dist.use_decentralized_pg = False
    return cfg
