// Turns the raw bytes of one input into text: plain, zstd (streaming, concatenated frames) or gzip (concatenated
// members), chosen by the magic bytes, never by the file name. A damaged or truncated stream keeps everything
// decoded before the damage and records where it is.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace hcp::logscan {

enum class Compression { plain, zstd, gzip };
std::string_view compression_name(Compression c);

struct Damage {
  uint64_t offset = 0;  // byte offset in the raw (compressed) input
  std::string message;
};

class StreamDecoder {
 public:
  using Sink = std::function<void(const char*, size_t)>;
  // `ahead`: a compressed stream is decoded on a thread of its own while the caller scans the text decoded
  // before (decode_ahead.cpp); the sink is still called on the caller's thread, from feed() and finish().
  explicit StreamDecoder(Sink sink, bool ahead = false);
  ~StreamDecoder();
  StreamDecoder(const StreamDecoder&) = delete;
  StreamDecoder& operator=(const StreamDecoder&) = delete;

  void feed(const char* data, size_t size);
  void finish();

  Compression compression() const { return compression_; }
  const std::optional<Damage>& damage() const { return damage_; }
  uint64_t raw_bytes() const { return raw_bytes_; }

 private:
  struct Codec;
  class Ahead;
  void start(Compression c);
  void decode(const char* data, size_t size);
  // Decodes raw bytes that start at raw offset `base`, handing the text to `out` (the sink, or the thread's queue).
  void decode_at(const char* data, size_t size, uint64_t base, const Sink& out);
  void finish_codec();
  // If p is the codec's output buffer, swaps it with `buf` (sized to match first) and returns true.
  bool trade_output(const char* p, std::vector<char>& buf);

  Sink sink_;
  bool ahead_wanted_ = false;
  std::unique_ptr<Ahead> ahead_;  // the decoding thread, for a compressed stream
  Compression compression_ = Compression::plain;
  bool started_ = false;
  std::string magic_;  // the first bytes, held until the format is known
  std::unique_ptr<Codec> codec_;
  std::optional<Damage> damage_;
  uint64_t raw_bytes_ = 0;
};

}  // namespace hcp::logscan
