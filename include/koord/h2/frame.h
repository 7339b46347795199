// HTTP/2 frames (RFC 9113) as koord's HTTP/2 code (the runtime-proxy's relay, the runtime hooks'
// gRPC client and server) reads and writes them: the frame header, types, flags and settings.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace koord::h2 {

inline constexpr std::string_view kClientPreface = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
inline constexpr std::size_t kFrameHeaderSize = 9;
/// The smallest SETTINGS_MAX_FRAME_SIZE a peer may announce: frames the relay makes itself are
/// never larger, so they need no knowledge of what the receiver announced.
inline constexpr std::uint32_t kDefaultMaxFrameSize = 16384;
/// The largest frame the relay accepts (the protocol's limit, 2^24 - 1).
inline constexpr std::uint32_t kMaxFrameSize = (1u << 24) - 1;
/// The initial flow-control window of a connection and of a stream until SETTINGS say otherwise.
inline constexpr std::int64_t kDefaultWindow = 65535;

enum FrameType : std::uint8_t {
  kData = 0x0,
  kHeaders = 0x1,
  kPriority = 0x2,
  kRstStream = 0x3,
  kSettings = 0x4,
  kPushPromise = 0x5,
  kPing = 0x6,
  kGoaway = 0x7,
  kWindowUpdate = 0x8,
  kContinuation = 0x9,
};

enum FrameFlag : std::uint8_t {
  kEndStream = 0x1,  // DATA, HEADERS
  kAck = 0x1,        // SETTINGS, PING
  kEndHeaders = 0x4,
  kPadded = 0x8,
  kPriorityFlag = 0x20,
};

enum SettingId : std::uint16_t {
  kHeaderTableSize = 0x1,
  kEnablePush = 0x2,
  kMaxConcurrentStreamsSetting = 0x3,
  kInitialWindowSize = 0x4,
  kMaxFrameSizeSetting = 0x5,
  kMaxHeaderListSizeSetting = 0x6,
};

enum ErrorCode : std::uint32_t {
  kNoError = 0x0,
  kProtocolError = 0x1,
  kInternalError = 0x2,
  kFlowControlError = 0x3,
  kFrameSizeError = 0x6,
  kRefusedStream = 0x7,
  kCancel = 0x8,
  kCompressionError = 0x9,
  kEnhanceYourCalm = 0xb,
};

struct FrameHeader {
  std::uint32_t length = 0;
  std::uint8_t type = 0;
  std::uint8_t flags = 0;
  std::uint32_t stream = 0;
};

/// `p` points at 9 readable bytes.
FrameHeader parseFrameHeader(const char* p);
std::uint32_t readUint32(const char* p);

void appendFrameHeader(std::string& out, std::uint32_t length, std::uint8_t type,
                       std::uint8_t flags, std::uint32_t stream);
void appendWindowUpdate(std::string& out, std::uint32_t stream, std::uint32_t increment);
void appendRstStream(std::string& out, std::uint32_t stream, std::uint32_t error);
void appendGoaway(std::string& out, std::uint32_t last_stream, std::uint32_t error);
/// A SETTINGS frame (not an ACK) with `settings` as (id, value) pairs.
void appendSettings(std::string& out,
                    std::initializer_list<std::pair<std::uint16_t, std::uint32_t>> settings);
/// A header block as HEADERS plus as many CONTINUATION frames as kDefaultMaxFrameSize needs.
void appendHeaderBlock(std::string& out, std::uint32_t stream, std::string_view block,
                       bool end_stream);

/// What a DATA or HEADERS frame carries once its padding (and a HEADERS frame's priority
/// fields) are taken off; nullopt when the padding does not fit in the frame.
std::optional<std::string_view> framePayload(const FrameHeader& h, std::string_view payload);

/// SETTINGS payload entries, in order; `f` is called with (id, value).
template <typename F>
void forEachSetting(std::string_view payload, F&& f) {
  for (std::size_t i = 0; i + 6 <= payload.size(); i += 6) {
    const auto id = static_cast<std::uint16_t>((static_cast<std::uint8_t>(payload[i]) << 8) |
                                               static_cast<std::uint8_t>(payload[i + 1]));
    f(id, readUint32(payload.data() + i + 2));
  }
}

}  // namespace koord::h2
