#!/bin/bash
# The findings of a multi-line command are silenced by a directive on any of its lines or on the line before it;
# a code that names no rule is HCP029.
# hcp-lint: disable=HCP010
torchrun --nproc-per-node 8 pretrain_gpt.py \
  --context-parallel-size 3 \
  --seq-length 4096 \
  --num-attention-heads 32  # hcp-lint: disable=HCP003, HCP03
