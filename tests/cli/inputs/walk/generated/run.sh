#!/bin/bash
# Left out by ../.ignore: CP 3 does not divide 4096 into 2*3 chunks.
torchrun --nproc-per-node 8 pretrain_gpt.py --context-parallel-size 3 --seq-length 4096 --num-attention-heads 32
