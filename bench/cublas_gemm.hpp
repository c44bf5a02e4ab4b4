// The in-run reference for the CUDA kernels' speed: what cuBLAS reaches on a bf16 GEMM with fp32 accumulation on
// the same GPU, in the same process. Attention cannot beat a large GEMM on the same tensor cores, so forward
// TFLOP/s over this figure says how much of the reachable tensor-core rate the kernel gets (FlashAttention-2's
// forward is quoted at 50-70% of it on sm_80/sm_90).
#pragma once

// TFLOP/s of C = A B for n x n x n bf16 matrices (fp32 compute), best of `repeat` timed calls after a warm-up;
// a negative value when cuBLAS or CUDA failed (the reason went to stderr).
double cublas_bf16_gemm_tflops(int n, int repeat);
