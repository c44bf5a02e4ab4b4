from megatron.bridge import AutoBridge
from megatron.bridge.training.config import ConfigContainer

def build():
    bridge = AutoBridge.from_hf_pretrained("meta-llama/Llama-3.1-8B")
    provider = bridge.to_megatron_provider(load_weights=False)
    provider.context_parallel_size = 4
    provider.cp_comm_type = "a2a+p2p"
    cfg = ConfigContainer(model=provider)
    return cfg
