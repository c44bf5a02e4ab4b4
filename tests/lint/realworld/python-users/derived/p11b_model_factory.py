import nemo_run as run
from nemo import lightning as nl
from nemo.collections import llm
from nemo.collections.llm.api import pretrain


def model() -> run.Config:
    conf = run.Config(llm.Llama31Config70B)
    conf.seq_length = 8192
    return run.Config(llm.LlamaModel, config=conf)


def pretrain_recipe() -> run.Partial:
    strategy = run.Config(nl.MegatronStrategy, tensor_model_parallel_size=1, context_parallel_size=3)
    return run.Partial(pretrain, model=model(), trainer=run.Config(nl.Trainer, devices=8, num_nodes=1, strategy=strategy))
