// The public CUDA and NCCL entry points (attention_cuda.hpp, nccl_communicator.hpp) without linking CUDA: the first
// call loads libhcp_cuda.so (modules/module_loader.hpp: $HCP_CUDA_MODULE, beside libhcp.so, ../lib, the build tree,
// the loader's search path) and every call goes through its table. Without the module - a build without the GPU
// path, a machine without the CUDA driver or NCCL, HCP_CUDA_MODULE=off - each says why, as Errc::unsupported.
#include "cuda_module/cuda_module_abi.hpp"
#include "hcp/attention_cuda.hpp"
#include "hcp/nccl_communicator.hpp"
#include "modules/module_loader.hpp"

namespace hcp {
namespace {

modules::LoadedModule load() {
  modules::ModuleSpec spec{};
  spec.file = "libhcp_cuda.so";
  spec.entry = cuda_module::kEntryName;
  spec.env = "HCP_CUDA_MODULE";
#ifdef HCP_CUDA_MODULE_BUILD_PATH
  spec.build_path = HCP_CUDA_MODULE_BUILD_PATH;
#endif
  spec.abi = cuda_module::kAbi;
  spec.purpose = "the GPU path";
  spec.needs = "the CUDA driver and NCCL (libnccl.so.2)";
  spec.not_built = "this build of hcp has no CUDA path (configure with HCP_WITH_CUDA=ON and the CUDA toolkit and "
                   "NCCL installed)";
  return modules::load_module(spec);
}

const modules::LoadedModule& module() {
  static const modules::LoadedModule loaded = load();  // thread-safe, once
  return loaded;
}

const cuda_module::Table* module_table() { return reinterpret_cast<const cuda_module::Table*>(module().table); }

Status missing() { return {Errc::unsupported, module().why}; }

}  // namespace

bool cuda_built() { return module_table() != nullptr; }

Status cuda_device_status() {
  const auto* t = module_table();
  return t ? t->device_status() : missing();
}

Status cuda_stream_create(void** stream) {
  const auto* t = module_table();
  return t ? t->stream_create(stream) : missing();
}

void cuda_stream_destroy(void* stream) {
  if (const auto* t = module_table()) t->stream_destroy(stream);
}

Status cuda_stream_synchronize(void* stream) {
  const auto* t = module_table();
  return t ? t->stream_synchronize(stream) : missing();
}

Status attention_forward_cuda(const AttnParams& p, void* stream) {
  const auto* t = module_table();
  return t ? t->attention_forward(p, stream) : missing();
}

Status attention_backward_cuda(const AttnParams& p, void* stream) {
  const auto* t = module_table();
  return t ? t->attention_backward(p, stream) : missing();
}

Status attention_delta_cuda(const AttnParams& p, void* stream) {
  const auto* t = module_table();
  return t ? t->attention_delta(p, stream) : missing();
}

Status make_cuda_engine(void* stream, std::unique_ptr<CpEngine>* out) {
  const auto* t = module_table();
  return t ? t->make_engine(stream, out) : missing();
}

Status make_nccl_communicator(void* nccl_comm, const NcclOptions& options, std::unique_ptr<Communicator>* out) {
  const auto* t = module_table();
  return t ? t->wrap_nccl(nccl_comm, options, out) : missing();
}

Status nccl_unique_id(unsigned char (&id)[kNcclUniqueIdBytes]) {
  const auto* t = module_table();
  return t ? t->nccl_unique_id(id) : missing();
}

Status make_nccl_communicator(const unsigned char (&id)[kNcclUniqueIdBytes], int rank, int size,
                              const NcclOptions& options, std::unique_ptr<Communicator>* out) {
  const auto* t = module_table();
  return t ? t->create_nccl(id, rank, size, options, out) : missing();
}

}  // namespace hcp
