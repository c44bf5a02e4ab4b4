"""a2a+p2p without hierarchical_context_parallel_sizes: training runs, without context parallelism (HCP001)."""
from megatron.bridge.recipes.llama import llama3_8b_pretrain_config
from megatron.bridge.training.config import ConfigContainer


def pretrain_config(seq_length: int = 16384) -> ConfigContainer:
    cfg = llama3_8b_pretrain_config()
    cfg.model.context_parallel_size = 4
    cfg.model.cp_comm_type = "a2a+p2p"
    cfg.model.seq_length = seq_length
    cfg.dataset.seq_length = seq_length
    return cfg
