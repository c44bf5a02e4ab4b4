// Turns the raw bytes of one input into text: plain, zstd (streaming, concatenated frames) or gzip (concatenated
// members), chosen by the magic bytes, never by the file name. A damaged or truncated stream keeps everything
// decoded before the damage and records where it is.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

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
  explicit StreamDecoder(Sink sink);
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
  void start(Compression c);
  void decode(const char* data, size_t size);

  Sink sink_;
  Compression compression_ = Compression::plain;
  bool started_ = false;
  std::string magic_;  // the first bytes, held until the format is known
  std::unique_ptr<Codec> codec_;
  std::optional<Damage> damage_;
  uint64_t raw_bytes_ = 0;
};

}  // namespace hcp::logscan
