// Finds a set of literals in a buffer: the prefilter in front of the extractors, so that no regex runs on a line
// that cannot match. AVX2 "Teddy"-style fingerprinting of the first four bytes (nibble tables looked up with
// pshufb, 32 positions at a time), then an exact compare of the candidates; a scalar form of the same tables on
// machines without AVX2 and for the last bytes of a range.
//
// The search is a cursor that stops at each occurrence, so the caller can move it past the rest of a line it has
// already understood (ripgrep's strategy: the bytes after an iteration line's key are never fingerprinted), and
// the cursor carries the line start and the newline count, so a hit's line and line number cost nothing extra.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace hcp::logscan {

struct ScanCursor {
  size_t pos = 0;         // the next position to look at
  size_t line_start = 0;  // the start of the line that holds pos
  uint64_t newlines = 0;  // '\n' bytes before pos
};

class LiteralSet {
 public:
  // Literals of at least 4 bytes, none holding a '\n'. A hit reports bit `bits[k]` for literal k (several literals
  // may share a bit: the caller only needs to know which kind of line it is); without `bits`, bit k, and at most
  // 64 literals.
  explicit LiteralSet(std::vector<std::string> literals, std::vector<uint8_t> bits = {});

  // Moves the cursor to the first position in [cursor.pos, limit) where literals start and returns them as bits
  // (bit k = literal k); data[0, size) is readable, so a literal may run past limit. Returns 0 when there is
  // none: the cursor is then at limit, with the line start and newline count there.
  uint64_t next(const char* data, size_t size, size_t limit, ScanCursor& cursor) const;

  const std::string& literal(uint32_t id) const { return literals_[id]; }
  size_t size() const { return literals_.size(); }

 private:
  uint64_t match_at(const char* data, size_t size, size_t pos, uint8_t buckets) const;
  uint8_t buckets_at(const uint8_t* u) const;
  uint64_t next_scalar(const char* data, size_t size, size_t limit, ScanCursor& cursor) const;
  uint64_t next_avx2(const char* data, size_t size, size_t limit, ScanCursor& cursor) const;

  std::vector<std::string> literals_;
  std::vector<uint64_t> bit_of_;  // by literal: the bit its hits set
  std::vector<uint32_t> bucket_members_[8];
  std::vector<uint32_t> heads_;  // first four bytes of each literal
  static uint32_t head_hash(uint32_t head) { return (head * 0x9E3779B1u) >> 16; }
  uint64_t head_filter_[1024];   // bit head_hash(head) set for each literal's head (8 KiB, in L1)
  alignas(32) uint8_t lo_[4][32];  // per fingerprint byte: bucket bits by low nibble (16 entries, twice for AVX2)
  alignas(32) uint8_t hi_[4][32];  // ... by high nibble
  bool use_avx2_ = false;
};

}  // namespace hcp::logscan
