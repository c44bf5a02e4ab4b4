#include "cublas_gemm.hpp"

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cstdio>

namespace {

bool cuda_ok(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return true;
  std::fprintf(stderr, "cublas_gemm: %s: %s\n", what, cudaGetErrorString(e));
  return false;
}

bool cublas_ok(cublasStatus_t s, const char* what) {
  if (s == CUBLAS_STATUS_SUCCESS) return true;
  std::fprintf(stderr, "cublas_gemm: %s: cuBLAS status %d\n", what, static_cast<int>(s));
  return false;
}

}  // namespace

double cublas_bf16_gemm_tflops(int n, int repeat) {
  const size_t bytes = static_cast<size_t>(n) * n * 2;
  void *a = nullptr, *b = nullptr, *c = nullptr;
  cublasHandle_t handle = nullptr;
  cudaEvent_t start = nullptr, stop = nullptr;
  double best_ms = -1;
  // Inputs are zero: the tensor cores' speed does not depend on the values, and memset is quick.
  bool good = cuda_ok(cudaMalloc(&a, bytes), "cudaMalloc") && cuda_ok(cudaMalloc(&b, bytes), "cudaMalloc") &&
              cuda_ok(cudaMalloc(&c, bytes), "cudaMalloc") && cuda_ok(cudaMemset(a, 0, bytes), "cudaMemset") &&
              cuda_ok(cudaMemset(b, 0, bytes), "cudaMemset") && cublas_ok(cublasCreate(&handle), "cublasCreate") &&
              cuda_ok(cudaEventCreate(&start), "cudaEventCreate") && cuda_ok(cudaEventCreate(&stop), "cudaEventCreate");
  const float alpha = 1.0f, beta = 0.0f;
  auto gemm = [&] {
    return cublas_ok(cublasGemmEx(handle, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &alpha, a, CUDA_R_16BF, n, b,
                                  CUDA_R_16BF, n, &beta, c, CUDA_R_16BF, n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
                     "cublasGemmEx");
  };
  good = good && gemm() && cuda_ok(cudaDeviceSynchronize(), "warm-up");
  for (int i = 0; good && i < repeat; ++i) {
    float ms = 0;
    good = cuda_ok(cudaEventRecord(start), "cudaEventRecord") && gemm() &&
           cuda_ok(cudaEventRecord(stop), "cudaEventRecord") && cuda_ok(cudaEventSynchronize(stop), "gemm") &&
           cuda_ok(cudaEventElapsedTime(&ms, start, stop), "cudaEventElapsedTime");
    if (good && (best_ms < 0 || ms < best_ms)) best_ms = ms;
  }
  if (handle) cublasDestroy(handle);
  for (cudaEvent_t e : {start, stop})
    if (e) cudaEventDestroy(e);
  for (void* p : {a, b, c}) cudaFree(p);
  if (!good || best_ms <= 0) return -1;
  return 2.0 * n * static_cast<double>(n) * n / (best_ms * 1e-3) / 1e12;
}
