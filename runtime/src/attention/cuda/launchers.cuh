// Declarations of the kernel launchers; the definitions are instantiated once each, in instances/*.cu.
#pragma once

#include <cuda_runtime.h>

#include "hcp/attention_params.hpp"

namespace hcp::kern {

template <class E, int D, bool Causal>
cudaError_t launch_flash_forward(const AttnParams& p, cudaStream_t stream);
template <class E, int D, bool Causal>
cudaError_t launch_flash_backward(const AttnParams& p, cudaStream_t stream);

}  // namespace hcp::kern
