#include "stream_decoder.hpp"

#include "decode_ahead.hpp"

#include <zlib.h>
#include <zstd.h>

#include <algorithm>
#include <cstring>
#include <vector>

namespace hcp::logscan {
namespace {

constexpr size_t kOutChunk = 256 << 10;  // scanned while it is still in the L2 cache (1 MiB was 5% slower)
// zstd windows above 32 MiB (zstd --long=27 and up) would break the scanner's memory bound; such frames are
// reported as damage instead of being decoded.
constexpr int kZstdWindowLogMax = 25;

}  // namespace

std::string_view compression_name(Compression c) {
  switch (c) {
    case Compression::plain: return "plain";
    case Compression::zstd: return "zstd";
    case Compression::gzip: return "gzip";
  }
  return "plain";
}

struct StreamDecoder::Codec {
  ZSTD_DCtx* zstd = nullptr;
  z_stream gz{};
  bool gz_ready = false;
  bool in_frame = false;  // inside a frame or member that has not ended yet
  bool after_member = false;
  bool trailing = false;  // past the last member: only zero bytes may follow (gzip pads with them)
  std::vector<char> out = std::vector<char>(kOutChunk);
  ~Codec() {
    if (zstd) ZSTD_freeDCtx(zstd);
    if (gz_ready) inflateEnd(&gz);
  }
};

StreamDecoder::StreamDecoder(Sink sink, bool ahead) : sink_(std::move(sink)), ahead_wanted_(ahead) {}
StreamDecoder::~StreamDecoder() = default;

void StreamDecoder::start(Compression c) {
  compression_ = c;
  started_ = true;
  if (c == Compression::plain) return;
  codec_ = std::make_unique<Codec>();
  if (c == Compression::zstd) {
    codec_->zstd = ZSTD_createDCtx();
    ZSTD_DCtx_setParameter(codec_->zstd, ZSTD_d_windowLogMax, kZstdWindowLogMax);
  } else {
    if (inflateInit2(&codec_->gz, 16 + MAX_WBITS) != Z_OK) throw std::bad_alloc();
    codec_->gz_ready = true;
  }
  if (ahead_wanted_) ahead_ = std::make_unique<Ahead>(*this);  // after the codec: the thread decodes with it
}

void StreamDecoder::feed(const char* data, size_t size) {
  if (!started_) {
    const size_t take = std::min(size, size_t{4} - magic_.size());
    magic_.append(data, take);
    data += take;
    size -= take;
    if (magic_.size() < 4) return;
    const auto* m = reinterpret_cast<const unsigned char*>(magic_.data());
    // zstd frames, or a skippable frame first (magic 0x184D2A50-5F: pzstd writes one ahead of its frames).
    const bool skippable = (m[0] & 0xF0) == 0x50 && m[1] == 0x2A && m[2] == 0x4D && m[3] == 0x18;
    if ((m[0] == 0x28 && m[1] == 0xB5 && m[2] == 0x2F && m[3] == 0xFD) || skippable) {
      start(Compression::zstd);
    } else if (m[0] == 0x1F && m[1] == 0x8B) {
      start(Compression::gzip);
    } else {
      start(Compression::plain);
    }
    const std::string head = std::move(magic_);
    magic_.clear();
    decode(head.data(), head.size());
  }
  if (size > 0) decode(data, size);
}

void StreamDecoder::decode(const char* data, size_t size) {
  const uint64_t base = raw_bytes_;
  raw_bytes_ += size;
  if (ahead_) return ahead_->push(data, size, base);
  decode_at(data, size, base, sink_);
}

void StreamDecoder::decode_at(const char* data, size_t size, uint64_t base, const Sink& emit) {
  if (damage_) return;  // nothing after the damage is trusted
  if (compression_ == Compression::plain) {
    emit(data, size);
    return;
  }
  Codec& c = *codec_;
  if (compression_ == Compression::zstd) {
    ZSTD_inBuffer in{data, size, 0};
    for (;;) {
      ZSTD_outBuffer out{c.out.data(), c.out.size(), 0};
      const size_t consumed = in.pos;
      const size_t ret = ZSTD_decompressStream(c.zstd, &out, &in);
      if (ZSTD_isError(ret)) {
        if (out.pos) emit(c.out.data(), out.pos);
        damage_ = Damage{base + in.pos, std::string("corrupt zstd data: ") + ZSTD_getErrorName(ret)};
        return;
      }
      // A call that neither read nor wrote says nothing about the frame: after a frame whose text filled the
      // output exactly (a multiple of kOutChunk), the extra call reports the next frame's header as wanted.
      if (in.pos != consumed || out.pos) c.in_frame = ret != 0;
      if (out.pos) emit(c.out.data(), out.pos);
      if (in.pos == in.size && out.pos < out.size) return;
    }
  }
  // gzip: members follow one another. After the last one, zero bytes are padding (ignored, as gzip does); any
  // other byte is damage - the rest of the file is not read as text, and the report says so (gzip warns too).
  c.gz.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data));
  c.gz.avail_in = static_cast<uInt>(size);
  while (c.gz.avail_in > 0) {
    if (c.after_member && (c.trailing || c.gz.next_in[0] != 0x1F)) {
      c.trailing = true;
      const char* rest = reinterpret_cast<const char*>(c.gz.next_in);
      const char* end = rest + c.gz.avail_in;
      const char* junk = std::find_if(rest, end, [](char b) { return b != 0; });
      if (junk != end)
        damage_ = Damage{base + static_cast<uint64_t>(junk - data),
                         "trailing data after the last gzip member: not gzip, not read"};
      return;
    }
    if (c.after_member) {
      inflateReset(&c.gz);
      c.after_member = false;
    }
    c.gz.next_out = reinterpret_cast<Bytef*>(c.out.data());
    c.gz.avail_out = static_cast<uInt>(c.out.size());
    const int ret = inflate(&c.gz, Z_NO_FLUSH);
    const size_t produced = c.out.size() - c.gz.avail_out;
    if (produced) emit(c.out.data(), produced);
    if (ret == Z_STREAM_END) {
      c.in_frame = false;
      c.after_member = true;
      continue;
    }
    if (ret != Z_OK && ret != Z_BUF_ERROR) {
      const uint64_t at = base + (size - c.gz.avail_in);
      damage_ = Damage{at, std::string("corrupt gzip data: ") + (c.gz.msg ? c.gz.msg : "inflate failed")};
      return;
    }
    c.in_frame = true;
    if (produced == 0 && ret == Z_BUF_ERROR) break;
  }
}

bool StreamDecoder::trade_output(const char* p, std::vector<char>& buf) {
  if (!codec_ || p != codec_->out.data()) return false;
  if (buf.size() != codec_->out.size()) buf.assign(codec_->out.size(), 0);
  std::swap(buf, codec_->out);
  return true;
}

void StreamDecoder::finish() {
  if (!started_ && magic_.size() >= 2 && static_cast<unsigned char>(magic_[0]) == 0x1F &&
      static_cast<unsigned char>(magic_[1]) == 0x8B) {
    // Shorter than a gzip header: a cut gzip stream, not two or three bytes of text.
    start(Compression::gzip);
    raw_bytes_ = magic_.size();
    damage_ = Damage{raw_bytes_, "truncated gzip stream: it ends inside a member"};
    return;
  }
  if (!started_) {
    start(Compression::plain);
    const std::string head = std::move(magic_);
    magic_.clear();
    decode(head.data(), head.size());
  }
  if (ahead_) {
    ahead_->finish();  // every block decoded and handed to the sink; the thread has ended
    ahead_.reset();
  }
  finish_codec();
}

void StreamDecoder::finish_codec() {
  if (compression_ == Compression::plain || damage_) return;
  Codec& c = *codec_;
  if (compression_ == Compression::gzip && c.gz_ready && !c.after_member) {
    // Drain what inflate still holds.
    for (;;) {
      c.gz.next_out = reinterpret_cast<Bytef*>(c.out.data());
      c.gz.avail_out = static_cast<uInt>(c.out.size());
      const int ret = inflate(&c.gz, Z_SYNC_FLUSH);
      const size_t produced = c.out.size() - c.gz.avail_out;
      if (produced) sink_(c.out.data(), produced);
      if (produced == 0 || ret != Z_OK) break;
    }
  }
  if (c.in_frame && !(compression_ == Compression::gzip && c.after_member)) {
    damage_ = Damage{raw_bytes_, std::string("truncated ") + std::string(compression_name(compression_)) +
                                     " stream: it ends inside a " +
                                     (compression_ == Compression::zstd ? "frame" : "member")};
  }
}

}  // namespace hcp::logscan
