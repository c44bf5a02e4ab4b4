// The versions of every versioned struct of hcp.h: the struct_size values a caller may pass (each at a field
// boundary, oldest first; the last is the whole struct) and the reserved fields that must be zero. Reading,
// writing and initialising a caller's struct all go through the same checks here.
#pragma once

#include <cstddef>
#include <cstring>
#include <array>
#include <string>

#include "guard.hpp"

namespace hcp::capi {

struct ReservedField {
  size_t offset;
  size_t size;
};

// Specialised once per struct below.
template <typename T>
struct StructVersions;

template <typename... S>
constexpr std::array<size_t, sizeof...(S)> size_list(S... s) {
  return {static_cast<size_t>(s)...};
}
template <typename... R>
constexpr std::array<ReservedField, sizeof...(R)> reserved_list(R... r) {
  return {r...};
}

// HCP_STRUCT_VERSIONS(struct, (sizes...), (reserved fields...))
#define HCP_STRUCT_VERSIONS(T, SIZES, RESERVED)                 \
  template <>                                                   \
  struct StructVersions<T> {                                    \
    static constexpr auto sizes = size_list SIZES;              \
    static constexpr auto reserved = reserved_list RESERVED;    \
  };
#define HCP_RESERVED(T, field) ReservedField{offsetof(T, field), sizeof(T::field)}

// hcp_parallel_config: its first version ended after cp and every later field boundary was accepted since 0.1.
HCP_STRUCT_VERSIONS(hcp_parallel_config,
                    (offsetof(hcp_parallel_config, ep), offsetof(hcp_parallel_config, order),
                     offsetof(hcp_parallel_config, num_hcp_levels), offsetof(hcp_parallel_config, hcp_sizes),
                     offsetof(hcp_parallel_config, gpus_per_node), sizeof(hcp_parallel_config)),
                    ())
HCP_STRUCT_VERSIONS(hcp_rank_coords, (sizeof(hcp_rank_coords)), ())
HCP_STRUCT_VERSIONS(hcp_locality, (sizeof(hcp_locality)), ())
HCP_STRUCT_VERSIONS(hcp_lint_options, (sizeof(hcp_lint_options)), ())
HCP_STRUCT_VERSIONS(hcp_lint_diagnostic, (sizeof(hcp_lint_diagnostic)),
                    (HCP_RESERVED(hcp_lint_diagnostic, reserved0)))
// 0.1 ended after gpu; 0.7 added series.
HCP_STRUCT_VERSIONS(hcp_logscan_options, (offsetof(hcp_logscan_options, series), sizeof(hcp_logscan_options)),
                    (HCP_RESERVED(hcp_logscan_options, reserved0)))
HCP_STRUCT_VERSIONS(hcp_plan_options, (sizeof(hcp_plan_options)), (HCP_RESERVED(hcp_plan_options, reserved0)))
HCP_STRUCT_VERSIONS(hcp_logscan_event, (sizeof(hcp_logscan_event)), ())
HCP_STRUCT_VERSIONS(hcp_tensor, (sizeof(hcp_tensor)), (HCP_RESERVED(hcp_tensor, reserved0)))
// 0.2 ended after reserved0; 0.6 added the window and the packed sequences.
HCP_STRUCT_VERSIONS(hcp_attn_options,
                    (offsetof(hcp_attn_options, sliding_window), offsetof(hcp_attn_options, softmax_type),
                     sizeof(hcp_attn_options)),
                    (HCP_RESERVED(hcp_attn_options, reserved0), HCP_RESERVED(hcp_attn_options, reserved1)))
HCP_STRUCT_VERSIONS(hcp_cp_context_options, (sizeof(hcp_cp_context_options)),
                    (HCP_RESERVED(hcp_cp_context_options, reserved0)))
// 0.2 ended after timeout_ms; 0.3 added device; 0.6 the window and the packed sequences.
HCP_STRUCT_VERSIONS(hcp_attn_simulate_options,
                    (offsetof(hcp_attn_simulate_options, device), offsetof(hcp_attn_simulate_options, sliding_window),
                     offsetof(hcp_attn_simulate_options, softmax_type), sizeof(hcp_attn_simulate_options)),
                    (HCP_RESERVED(hcp_attn_simulate_options, reserved0),
                     HCP_RESERVED(hcp_attn_simulate_options, reserved1),
                     HCP_RESERVED(hcp_attn_simulate_options, reserved2)))

HCP_STRUCT_VERSIONS(hcp_comm_callbacks, (sizeof(hcp_comm_callbacks)), (HCP_RESERVED(hcp_comm_callbacks, reserved0)))

#undef HCP_STRUCT_VERSIONS
#undef HCP_RESERVED

template <typename T>
std::string version_list() {
  std::string list;
  for (size_t s : StructVersions<T>::sizes) list += (list.empty() ? "" : ", ") + std::to_string(s);
  return list;
}

// Checks a caller's struct_size: one of the versions, or (reading only) a larger multiple of 8 from a newer
// header. Returns how many bytes the library knows of it.
template <typename T>
size_t checked_size(size_t size, bool allow_newer, const char* fn, const char* arg) {
  for (size_t s : StructVersions<T>::sizes)
    if (size == s) return size;
  if (allow_newer && size > sizeof(T) && size % 8 == 0) return sizeof(T);
  throw Error(Errc::invalid_argument, std::string(fn) + ": " + arg + "->struct_size (" + std::to_string(size) +
                                          ") is not a version of this struct (" + version_list<T>() +
                                          (allow_newer ? ", or a newer one" : "") +
                                          "); set it with the _INIT macro or the _init function");
}

// Reads a caller's versioned struct: fields beyond the caller's struct_size keep the defaults in `value`; unknown
// trailing bytes (a newer caller) and reserved fields must be zero.
template <typename T>
T read_versioned(const T* in, T value, const char* fn, const char* arg) {
  require(in, fn, arg);
  const size_t size = in->struct_size;
  const size_t known = checked_size<T>(size, true, fn, arg);
  const auto* bytes = reinterpret_cast<const unsigned char*>(in);
  for (size_t i = known; i < size; ++i) {
    if (bytes[i] != 0) {
      throw Error(Errc::unsupported, std::string(fn) + ": " + arg + " has non-zero fields at byte " +
                                         std::to_string(i) + " that this library (struct size " +
                                         std::to_string(sizeof(T)) + ") does not know");
    }
  }
  for (const ReservedField& r : StructVersions<T>::reserved) {
    if (r.offset + r.size > known) continue;
    for (size_t i = r.offset; i < r.offset + r.size; ++i) {
      if (bytes[i] != 0)
        throw Error(Errc::invalid_argument, std::string(fn) + ": " + arg + " has a non-zero reserved field at byte " +
                                                std::to_string(r.offset) + " (reserved fields must be 0)");
    }
  }
  std::memcpy(&value, in, known);
  value.struct_size = sizeof(T);
  return value;
}

// Writes an output struct: only the fields the caller's struct_size covers.
template <typename T>
void write_versioned(T* out, const T& value, const char* fn, const char* arg) {
  require(out, fn, arg);
  const size_t known = checked_size<T>(out->struct_size, true, fn, arg);
  std::memcpy(reinterpret_cast<unsigned char*>(out) + sizeof(size_t),
              reinterpret_cast<const unsigned char*>(&value) + sizeof(size_t), known - sizeof(size_t));
}

// hcp_<struct>_init: the defaults for exactly one of the struct's versions.
template <typename T>
void init_versioned(T* out, size_t struct_size, const T& defaults, const char* fn) {
  require(out, fn, "out");
  const size_t size = checked_size<T>(struct_size, false, fn, "out");
  std::memcpy(out, &defaults, size);
  out->struct_size = size;
}

}  // namespace hcp::capi
