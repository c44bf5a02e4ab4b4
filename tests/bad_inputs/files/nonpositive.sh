torchrun --nproc_per_node 0 --nnodes -2 pretrain_gpt.py --context-parallel-size 0 --tensor-model-parallel-size -8 --hierarchical-context-parallel-sizes 0 0
