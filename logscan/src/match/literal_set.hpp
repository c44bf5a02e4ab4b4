// Finds every occurrence of a set of literals in a buffer: the prefilter in front of the extractors, so that no
// regex runs on a line that cannot match. AVX2 "Teddy"-style fingerprinting of the first three bytes (nibble
// tables looked up with pshufb, 32 positions at a time), then an exact compare of the candidates; a scalar form of
// the same tables on machines without AVX2 and for the last bytes of a buffer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace hcp::logscan {

struct LiteralHit {
  size_t pos;         // offset of the literal's first byte
  uint32_t id;        // index into the literal list
  uint64_t newlines;  // '\n' bytes before pos: line numbers come out of the same pass
};

class LiteralSet {
 public:
  // Every literal must be at least 4 bytes.
  explicit LiteralSet(std::vector<std::string> literals);

  // Appends the occurrences in data[0, size), in position order (several literals may start at one position);
  // returns the number of '\n' bytes in the buffer.
  uint64_t find_all(const char* data, size_t size, std::vector<LiteralHit>& out) const;

  const std::string& literal(uint32_t id) const { return literals_[id]; }
  size_t size() const { return literals_.size(); }

 private:
  void verify(const char* data, size_t size, size_t pos, uint8_t buckets, uint64_t newlines,
              std::vector<LiteralHit>& out) const;
  uint64_t scan_scalar(const char* data, size_t size, size_t from, uint64_t newlines,
                       std::vector<LiteralHit>& out) const;
  uint64_t scan_avx2(const char* data, size_t size, std::vector<LiteralHit>& out) const;

  std::vector<std::string> literals_;
  std::vector<uint32_t> bucket_members_[8];
  std::vector<uint32_t> heads_;  // first four bytes of each literal
  alignas(32) uint8_t lo_[4][32];  // per fingerprint byte: bucket bits by low nibble (16 entries, twice for AVX2)
  alignas(32) uint8_t hi_[4][32];  // ... by high nibble
  bool use_avx2_ = false;
};

}  // namespace hcp::logscan
