from nemo.collections import llm

def configure_recipe(nodes: int = 1, gpus_per_node: int = 8):
    recipe = llm.qwen25_72b.pretrain_recipe(num_nodes=nodes, num_gpus_per_node=gpus_per_node,
                                         tensor_parallelism=4,
                                         pipeline_parallelism=4,
                                         context_parallelism=2)
    return recipe

def run_pretraining():
    recipe = configure_recipe(1, 8)
