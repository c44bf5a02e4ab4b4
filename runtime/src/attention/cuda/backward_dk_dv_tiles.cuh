// The dK/dV accumulation of both backward kernels for one 16-query k-step: dV += P^T dO and dK += dS^T Q, the A
// fragments (this warp's 16 keys x the k-step's 16 queries) in registers, dO and Q read transposed from shared
// memory.
#pragma once

#include <cstdint>

#include "kernel_env.cuh"
#include "warp_ops.cuh"

namespace hcp::kern {

// dv and dk hold Tiles 8-column C fragments; do_k and q_k are this lane's ldmatrix row addresses of the k-step's
// first dO and Q rows at the fragments' first column (consecutive 16-column pairs of tiles are 32 bytes apart).
template <class E, int Tiles>
HCP_KFN void add_dv_dk_kstep(float (&dv)[Tiles][4], float (&dk)[Tiles][4], const uint32_t (&pa)[4],
                             const uint32_t (&dsa)[4], SmemAddr do_k, SmemAddr q_k) {
  HCP_UNROLL
  for (int np = 0; np < Tiles / 2; ++np) {
    uint32_t dob[4], qb[4];
    ldmatrix_x4_trans(dob, do_k + 2 * 16 * np);
    ldmatrix_x4_trans(qb, q_k + 2 * 16 * np);
    mma_16816_x2<E>(dv[2 * np], dv[2 * np + 1], pa, dob);
    mma_16816_x2<E>(dk[2 * np], dk[2 * np + 1], dsa, qb);
  }
}

}  // namespace hcp::kern
