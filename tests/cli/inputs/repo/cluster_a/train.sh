#!/bin/bash
# world 8 from the [[cluster]] entry; tp 2 * a2a 4 leaves a 4-GPU node.
export CUDA_DEVICE_MAX_CONNECTIONS=1
python pretrain_gpt.py --micro-batch-size 1 --tensor-model-parallel-size 2 --context-parallel-size 4 \
    --cp-comm-type a2a --num-attention-heads 32 --seq-length 8192
