#!/bin/bash
torchrun --nproc-per-node 8 pretrain_gpt.py --context-parallel-size 4 --seq-length 4096 --num-attention-heads 32
