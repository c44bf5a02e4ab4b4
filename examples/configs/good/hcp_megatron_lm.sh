#!/bin/bash
# The same run as a Megatron-LM launch script (lint with --te-version 2.4.0).
export CUDA_DEVICE_MAX_CONNECTIONS=1

NNODES=${NNODES:-4}
GPUS_PER_NODE=8
CP=8

DISTRIBUTED_ARGS=(
    --nproc_per_node $GPUS_PER_NODE
    --nnodes $NNODES
)
MODEL_ARGS=(
    --num-layers 32
    --hidden-size 4096
    --num-attention-heads 32
    --group-query-attention
    --num-query-groups 8
    --seq-length 131072
)
PARALLEL_ARGS=(
    --tensor-model-parallel-size 4
    --context-parallel-size $CP
    --cp-comm-type a2a+p2p
    --hierarchical-context-parallel-sizes 2 4
)

torchrun "${DISTRIBUTED_ARGS[@]}" pretrain_gpt.py \
    "${MODEL_ARGS[@]}" \
    "${PARALLEL_ARGS[@]}" \
    --bf16
