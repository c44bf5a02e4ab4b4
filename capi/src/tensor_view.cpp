#include "tensor_view.hpp"

#include <string>

#include "guard.hpp"
#include "struct_versions.hpp"
#include "hcp/attention_cuda.hpp"

namespace hcp::capi {
namespace {

void throw_status(const Status& s) {
  if (!s.ok()) throw Error(s.code(), s.message());
}

}  // namespace

hcp_device to_device(int32_t value, const char* fn, const char* name) {
  if (value == HCP_DEVICE_CUDA && !cuda_built())  // the GPU module is absent: say why
    throw Error(Errc::unsupported, std::string(fn) + ": " + name + ": " + cuda_device_status().message());
  if (value != HCP_DEVICE_CPU && value != HCP_DEVICE_CUDA)
    throw Error(Errc::invalid_argument, std::string(fn) + ": " + name + ": " + std::to_string(value) +
                                            " is not an hcp_device");
  return static_cast<hcp_device>(value);
}

bool TensorView::contiguous() const {
  int64_t expected = 1;
  for (int i = ndim - 1; i >= 0; --i) {
    if (strides[i] != expected) return false;
    expected *= shape[i];
  }
  return true;
}

bool TensorView::usable_in_place() const {
  return contiguous() && (device != HCP_DEVICE_CUDA || reinterpret_cast<uintptr_t>(data) % 16 == 0);
}

TensorView view(const hcp_tensor* t, int ndim, const char* fn, const char* name) {
  hcp_tensor d = read_versioned(t, hcp_tensor HCP_TENSOR_INIT, fn, name);
  auto fail = [&](Errc code, const std::string& what) { throw Error(code, std::string(fn) + ": " + name + ": " + what); };
  if (d.dtype < 0 || d.dtype > 2) fail(Errc::invalid_argument, "dtype " + std::to_string(d.dtype) + " is not an hcp_dtype");
  const hcp_device device = to_device(d.device, fn, name);
  if (d.ndim != ndim) fail(Errc::shape, "expected " + std::to_string(ndim) + " dimensions, got " + std::to_string(d.ndim));
  if (d.data == nullptr) fail(Errc::invalid_argument, "data is NULL");
  // A zero stride is the contiguous stride of its dimension, from the dimensions after it (checked below).
  for (int i = ndim - 1; i >= 0; --i) {
    if (d.strides[i] != 0) continue;
    if (i == ndim - 1) {
      d.strides[i] = 1;
    } else if (d.shape[i + 1] < 1 || __builtin_mul_overflow(d.shape[i + 1], d.strides[i + 1], &d.strides[i])) {
      fail(Errc::shape, "dimension " + std::to_string(i + 1) + " (" + std::to_string(d.shape[i + 1]) +
                            ") cannot give dimension " + std::to_string(i) + " its contiguous stride");
    }
  }
  if (d.strides[ndim - 1] != 1)
    fail(Errc::unsupported, "the last dimension must be contiguous (stride 1), got stride " +
                                std::to_string(d.strides[ndim - 1]));
  // The furthest element, (shape - 1) . strides, and the element count must fit in int64.
  int64_t last = 0, count = 1;
  for (int i = 0; i < ndim; ++i) {
    if (d.shape[i] < 1) fail(Errc::shape, "dimension " + std::to_string(i) + " is " + std::to_string(d.shape[i]));
    if (d.strides[i] < 1)
      fail(Errc::invalid_argument, "stride " + std::to_string(i) + " is " + std::to_string(d.strides[i]) +
                                       " (strides must be positive)");
    int64_t reach = 0;
    if (__builtin_mul_overflow(d.shape[i] - 1, d.strides[i], &reach) || __builtin_add_overflow(last, reach, &last) ||
        __builtin_mul_overflow(count, d.shape[i], &count))
      fail(Errc::shape, "element offsets overflow");
  }
  TensorView v;
  v.data = d.data;
  v.dtype = static_cast<DType>(d.dtype);
  v.device = device;
  v.ndim = ndim;
  for (int i = 0; i < ndim; ++i) v.shape[i] = d.shape[i], v.strides[i] = d.strides[i];
  return v;
}

void expect_like(const TensorView& t, const TensorView& ref, int ndim, DType dtype, const char* fn, const char* name,
                 const char* ref_name) {
  if (t.device != ref.device)
    throw Error(Errc::invalid_argument, std::string(fn) + ": " + name + " and " + ref_name +
                                            " are on different devices");
  if (t.dtype != dtype)
    throw Error(Errc::shape, std::string(fn) + ": " + name + " has dtype " + dtype_name(t.dtype) + ", expected " +
                                 dtype_name(dtype));
  for (int i = 0; i < ndim; ++i)
    if (t.shape[i] != ref.shape[i])
      throw Error(Errc::shape, std::string(fn) + ": " + name + " dimension " + std::to_string(i) + " is " +
                                   std::to_string(t.shape[i]) + ", " + ref_name + " has " + std::to_string(ref.shape[i]));
}

void* ContiguousStaging::input(const TensorView& t) { return t.usable_in_place() ? t.data : stage(t, true); }

void* ContiguousStaging::output(const TensorView& t) {
  if (t.contiguous()) return t.data;
  void* scratch = stage(t, false);
  outputs_.emplace_back(t, scratch);
  return scratch;
}

void ContiguousStaging::finish() {
  for (auto& [t, scratch] : outputs_) copy(t, scratch, false);
  outputs_.clear();
}

void* ContiguousStaging::stage(const TensorView& t, bool pack) {
  size_t bytes = t.elem();
  for (int i = 0; i < t.ndim; ++i)
    if (__builtin_mul_overflow(bytes, static_cast<size_t>(t.shape[i]), &bytes))
      throw Error(Errc::shape, "a strided tensor's contiguous copy would exceed the address space");
  EngineBuffer buf;
  throw_status(eng_.alloc(bytes, &buf));
  void* data = buf.as();
  buffers_.push_back(std::move(buf));
  if (pack) copy(t, data, true);
  return data;
}

// 4-D [B, S, H, D]: per batch, S x H rows of D elements; 3-D [B, H, S]: per batch, H rows of S elements.
void ContiguousStaging::copy(const TensorView& t, void* contiguous, bool pack) {
  const size_t e = t.elem();
  const bool four = t.ndim == 4;
  const int64_t outer = t.shape[1], inner = four ? t.shape[2] : 1;  // S x H rows, or H x 1
  const size_t row = static_cast<size_t>(t.shape[t.ndim - 1]) * e;
  const size_t dense_outer = four ? static_cast<size_t>(t.shape[2]) * row : row, dense_inner = row;
  const size_t strided_outer = static_cast<size_t>(t.strides[1]) * e;
  const size_t strided_inner = four ? static_cast<size_t>(t.strides[2]) * e : 0;
  for (int64_t b = 0; b < t.shape[0]; ++b) {
    auto* dense = static_cast<unsigned char*>(contiguous) + static_cast<size_t>(b) * dense_outer *
                                                                static_cast<size_t>(outer);
    auto* strided = static_cast<unsigned char*>(t.data) + static_cast<size_t>(b * t.strides[0]) * e;
    if (pack)
      throw_status(eng_.copy_rows(outer, inner, row, dense, dense_outer, dense_inner, strided, strided_outer,
                                  strided_inner));
    else
      throw_status(eng_.copy_rows(outer, inner, row, strided, strided_outer, strided_inner, dense, dense_outer,
                                  dense_inner));
  }
}

}  // namespace hcp::capi
