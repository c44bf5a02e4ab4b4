/* CP attention between MPI processes through the C ABI - one rank per process, as a training job runs:
 *   mpirun -np 4 ./mpi_attention
 * Each process initialises MPI through hcp, makes an hcp communicator over MPI_COMM_WORLD (no MPI header needed),
 * builds its CP context (a2a+p2p [2, N/2] for an even number N >= 4 of ranks, p2p otherwise), runs the forward pass
 * on its dual chunks of a problem every process generates alike, and checks its rows against hcp_attn_simulate of
 * the whole problem in process. One line per rank; the exit status is non-zero when an error is above 1e-5. */
#include <hcp/hcp.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { H = 4, D = 16, CHUNK = 8 }; /* B = 1; CHUNK tokens per chunk: S = 2 * ranks * CHUNK */

static hcp_tensor tensor(float* data, int32_t ndim, int64_t d0, int64_t d1, int64_t d2, int64_t d3) {
  hcp_tensor t;
  hcp_tensor_init(&t, sizeof t); /* strides 0: contiguous */
  t.data = data;
  t.ndim = ndim;
  t.shape[0] = d0, t.shape[1] = d1, t.shape[2] = d2, t.shape[3] = d3;
  return t;
}

static int fail(int rank, const char* what) {
  fprintf(stderr, "mpi_attention: rank %d: %s: %s\n", rank, what, hcp_last_error());
  return 1;
}

/* Rows `chunk` of a [S, W] tensor (B = 1) into `local` at chunk slot `slot`. */
static void copy_chunk(float* local, int slot, const float* full, int64_t chunk, int64_t width) {
  memcpy(local + slot * CHUNK * width, full + chunk * CHUNK * width, sizeof(float) * (size_t)(CHUNK * width));
}

static double max_error(const float* got, const float* want, size_t n) {
  double worst = 0;
  for (size_t i = 0; i < n; ++i) worst = fmax(worst, fabs((double)got[i] - (double)want[i]));
  return worst;
}

int main(void) {
  int32_t rank = -1, n = 0;
  if (hcp_mpi_init(NULL) != HCP_OK) return fail(rank, "hcp_mpi_init");
  hcp_comm* world = NULL;
  if (hcp_comm_create_mpi(&world, HCP_MPI_COMM_WORLD, 0) != HCP_OK) return fail(rank, "hcp_comm_create_mpi");
  if (hcp_comm_rank(&rank, &n, world) != HCP_OK) return fail(rank, "hcp_comm_rank");

  const int64_t S = 2 * (int64_t)n * CHUNK, local = 2 * CHUNK, width = H * D;
  const int64_t hier[2] = {2, n / 2};
  const int hierarchical = n % 2 == 0 && n >= 4;
  hcp_parallel_config config;
  hcp_parallel_config_init(&config, sizeof config);
  config.world_size = n, config.cp = n;
  if (hierarchical) config.num_hcp_levels = 2, config.hcp_sizes = hier;
  hcp_cp_context* ctx = NULL;
  if (hcp_cp_context_create(&ctx, &config, world, hierarchical ? HCP_CP_COMM_A2A_P2P : HCP_CP_COMM_P2P) != HCP_OK)
    return fail(rank, "hcp_cp_context_create");
  int32_t cp_rank = 0, cp = 0;
  hcp_cp_context_rank(&cp_rank, &cp, ctx);

  /* The whole problem, alike on every process. */
  const size_t full_n = (size_t)(S * width), local_n = (size_t)(local * width);
  float* q = malloc(sizeof(float) * full_n * 4 + sizeof(float) * (size_t)(H * S) + sizeof(float) * local_n * 4 +
                    sizeof(float) * (size_t)(H * local));
  if (q == NULL) return 1;
  float *k = q + full_n, *v = k + full_n, *out = v + full_n, *lse = out + full_n;
  float *lq = lse + H * S, *lk = lq + local_n, *lv = lk + local_n, *lout = lv + local_n, *llse = lout + local_n;
  for (size_t i = 0; i < full_n; ++i) {
    q[i] = (float)((i * 7) % 23) / 23.0f - 0.5f;
    k[i] = (float)((i * 5) % 19) / 19.0f - 0.5f;
    v[i] = (float)(i % 17) / 17.0f;
  }
  /* This rank's dual chunks: cp_rank and 2n-1-cp_rank. */
  const int64_t chunks[2] = {cp_rank, 2 * (int64_t)n - 1 - cp_rank};
  for (int h = 0; h < 2; ++h) {
    copy_chunk(lq, h, q, chunks[h], width);
    copy_chunk(lk, h, k, chunks[h], width);
    copy_chunk(lv, h, v, chunks[h], width);
  }
  hcp_tensor tq = tensor(lq, 4, 1, local, H, D), tk = tensor(lk, 4, 1, local, H, D);
  hcp_tensor tv = tensor(lv, 4, 1, local, H, D), tout = tensor(lout, 4, 1, local, H, D);
  hcp_tensor tlse = tensor(llse, 3, 1, H, local, 0);
  hcp_attn_options options;
  hcp_attn_options_init(&options, sizeof options); /* causal */
  if (hcp_attn_forward(ctx, &options, &tq, &tk, &tv, &tout, &tlse) != HCP_OK) return fail(rank, "hcp_attn_forward");

  /* The reference: the whole computation on in-process ranks. */
  hcp_attn_simulate_options sim;
  hcp_attn_simulate_options_init(&sim, sizeof sim);
  sim.cp = 1;
  hcp_tensor fq = tensor(q, 4, 1, S, H, D), fk = tensor(k, 4, 1, S, H, D), fv = tensor(v, 4, 1, S, H, D);
  hcp_tensor fout = tensor(out, 4, 1, S, H, D), flse = tensor(lse, 3, 1, H, S, 0);
  if (hcp_attn_simulate(&sim, &fq, &fk, &fv, &fout, &flse, NULL, NULL, NULL, NULL) != HCP_OK)
    return fail(rank, "hcp_attn_simulate");
  float* want = malloc(sizeof(float) * local_n);
  if (want == NULL) return 1;
  for (int h = 0; h < 2; ++h) copy_chunk(want, h, out, chunks[h], width);
  const double error = max_error(lout, want, local_n);
  printf("mpi_attention: rank %d of %d (%s, CP rank %d): forward max error %.2e\n", rank, n,
         hierarchical ? "a2a+p2p" : "p2p", cp_rank, error);
  free(want);
  free(q);
  hcp_cp_context_destroy(ctx);
  hcp_comm_destroy(world);
  if (hcp_mpi_finalize() != HCP_OK) return fail(rank, "hcp_mpi_finalize");
  return error <= 1e-5 ? 0 : 1;
}
