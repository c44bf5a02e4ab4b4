#!/bin/bash
# --cp-comm-type allgather (as Megatron's --help spells it) fails at the first forward; no CUDA_DEVICE_MAX_CONNECTIONS.
torchrun --nproc_per_node 8 --nnodes 2 pretrain_gpt.py \
    --tensor-model-parallel-size 2 \
    --context-parallel-size 3 \
    --cp-comm-type allgather \
    --seq-length 8192
