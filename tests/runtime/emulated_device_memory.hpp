// The emulated engines' model of device memory: every live buffer of the process with its device and owner, so that
// an engine can refuse a copy or kernel operand that is not a live buffer of its device (freed, never allocated,
// another device's), as a GPU would fault.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>

namespace hcp::testing {

// Every live emulated device buffer of the process: start address -> (bytes, device, owning engine).
struct EmulatedDeviceMemory {
  struct Block {
    size_t bytes;
    int device;
    const void* owner;
  };
  std::mutex mu;
  std::map<uintptr_t, Block> blocks;
  int64_t faults = 0;  // accesses refused so far (under mu): a test that expects none compares before and after

  static EmulatedDeviceMemory& instance() {
    static EmulatedDeviceMemory memory;
    return memory;
  }
  // The block holding [ptr, ptr + bytes), or nullptr.
  const Block* find(const void* ptr, size_t bytes) {
    const auto at = reinterpret_cast<uintptr_t>(ptr);
    auto it = blocks.upper_bound(at);
    if (it == blocks.begin()) return nullptr;
    --it;
    return at + bytes <= it->first + it->second.bytes ? &it->second : nullptr;
  }
};

}  // namespace hcp::testing
