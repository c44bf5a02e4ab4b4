#!/bin/bash
# Copyright (c) 2026, NVIDIA CORPORATION.  All rights reserved.
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at
#
#     http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
# See the License for the specific language governing permissions and
# limitations under the License.
#
# Gemma 4 VL 26B-A4B LoRA fine-tuning.
#
# Usage (single node, 8 GPUs):
#   sbatch slurm_peft.sh
#
# Usage (multi-node, e.g. 2 nodes with EP=8):
#   NUM_NODES=2 TP=2 PP=1 EP=8 sbatch --nodes=2 slurm_peft.sh

#SBATCH --job-name=gemma4vl-lora
#SBATCH --nodes=1
#SBATCH --ntasks-per-node=8
#SBATCH --gpus-per-node=8
#SBATCH --time=00:30:00
#SBATCH --partition=gpu
#SBATCH --account=my_account
#SBATCH --output=gemma4_vl_peft_%j.out
#SBATCH --error=gemma4_vl_peft_%j.err
#SBATCH --exclusive

# ==============================================================================
# CONFIGURATION
# ==============================================================================

WORKSPACE=${WORKSPACE:-/workspace}

PRETRAINED_CHECKPOINT=${PRETRAINED_CHECKPOINT:-${WORKSPACE}/models/gemma-4-26B-A4B}
PEFT_SCHEME=${PEFT_SCHEME:-lora}
DATASET_NAME=${DATASET_NAME:-cord_v2}
SEQ_LENGTH=${SEQ_LENGTH:-4096}
TRAIN_ITERS=${TRAIN_ITERS:-50}
GBS=${GBS:-32}
MBS=${MBS:-1}
EVAL_ITERS=${EVAL_ITERS:-10}
LR=${LR:-0.0002}
MIN_LR=${MIN_LR:-0.00002}
LR_WARMUP_ITERS=${LR_WARMUP_ITERS:-10}
TP=${TP:-2}
PP=${PP:-1}
EP=${EP:-4}   # TP=2, PP=1, 8 GPUs: DP=4=EP → experts split across EP ranks (fixes LoRA duplicate shard keys)
SAVE_DIR=${SAVE_DIR:-${WORKSPACE}/results/gemma4_vl_lora_tp${TP}_pp${PP}_ep${EP}_${SLURM_JOB_ID}}

# Container image (required)
CONTAINER_IMAGE="${CONTAINER_IMAGE:-}"
# CONTAINER_IMAGE="/path/to/container.sqsh"

# Container mounts (optional)
CONTAINER_MOUNTS="${CONTAINER_MOUNTS:-}"
# CONTAINER_MOUNTS="/data:/data,/workspace:/workspace"

# ==============================================================================
# Environment
# ==============================================================================

export TORCH_NCCL_AVOID_RECORD_STREAMS=1
export NCCL_NVLS_ENABLE=0

# export UV_CACHE_DIR="/path/to/shared/uv_cache"
# export HF_HOME="/path/to/shared/HF_HOME"
# export HF_TOKEN="hf_your_token_here"
# export WANDB_API_KEY="your_wandb_key_here"
# export WANDB_MODE=disabled

export MASTER_ADDR=$(scontrol show hostnames $SLURM_JOB_NODELIST | head -1)
export MASTER_PORT=${MASTER_PORT:-29501}

# ==============================================================================
# Job
# ==============================================================================

echo "======================================"
echo "Gemma 4 VL 26B-A4B LoRA (PEFT)"
echo "======================================"
echo "Job ID: $SLURM_JOB_ID"
echo "Nodes: $SLURM_JOB_NUM_NODES"
echo "Total tasks: $SLURM_NTASKS"
echo "PEFT scheme: $PEFT_SCHEME"
echo "TP=$TP PP=$PP EP=$EP"
echo "Checkpoint: $PRETRAINED_CHECKPOINT"
echo "Save: $SAVE_DIR"
echo "Master: $MASTER_ADDR:$MASTER_PORT"
echo "======================================"

CMD="cd /opt/Megatron-Bridge && "
CMD="${CMD}export RANK=\$SLURM_PROCID LOCAL_RANK=\$SLURM_LOCALID WORLD_SIZE=\$SLURM_NTASKS && "
CMD="${CMD}uv run --no-sync python scripts/training/run_recipe.py"
CMD="${CMD} --recipe gemma4_vl_26b_peft_config"
CMD="${CMD} --step_func vlm_step"
CMD="${CMD} --mode ${PEFT_SCHEME}"
CMD="${CMD} checkpoint.pretrained_checkpoint=${PRETRAINED_CHECKPOINT}"
CMD="${CMD} model.tensor_model_parallel_size=${TP}"
CMD="${CMD} model.pipeline_model_parallel_size=${PP}"
CMD="${CMD} model.expert_model_parallel_size=${EP}"
CMD="${CMD} model.seq_length=${SEQ_LENGTH}"
CMD="${CMD} train.train_iters=${TRAIN_ITERS}"
CMD="${CMD} train.global_batch_size=${GBS}"
CMD="${CMD} train.micro_batch_size=${MBS}"
CMD="${CMD} validation.eval_iters=${EVAL_ITERS}"
CMD="${CMD} optimizer.lr=${LR}"
CMD="${CMD} optimizer.min_lr=${MIN_LR}"
CMD="${CMD} scheduler.lr_warmup_iters=${LR_WARMUP_ITERS}"
CMD="${CMD} checkpoint.save=${SAVE_DIR}"
CMD="${CMD} dataset.source.dataset_name=${DATASET_NAME}"
CMD="${CMD} dataset.seq_length=${SEQ_LENGTH}"

echo "Running training..."

if [ -z "$CONTAINER_IMAGE" ]; then
    echo "ERROR: CONTAINER_IMAGE must be set. Please specify a valid container image."
    exit 1
fi

SRUN_CMD="srun --mpi=pmix --container-image=${CONTAINER_IMAGE} --no-container-mount-home"

if [ -n "$CONTAINER_MOUNTS" ]; then
    SRUN_CMD="${SRUN_CMD} --container-mounts=${CONTAINER_MOUNTS}"
fi

$SRUN_CMD bash -c "$CMD"

echo "======================================"
echo "Training job finished. EXIT=$?"
echo "======================================"
