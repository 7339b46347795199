#include "koord/h2/frame.h"

#include <algorithm>

namespace koord::h2 {

std::uint32_t readUint32(const char* p) {
  const auto* u = reinterpret_cast<const unsigned char*>(p);
  return (std::uint32_t{u[0]} << 24) | (std::uint32_t{u[1]} << 16) | (std::uint32_t{u[2]} << 8) |
         std::uint32_t{u[3]};
}

FrameHeader parseFrameHeader(const char* p) {
  const auto* u = reinterpret_cast<const unsigned char*>(p);
  FrameHeader h;
  h.length = (std::uint32_t{u[0]} << 16) | (std::uint32_t{u[1]} << 8) | std::uint32_t{u[2]};
  h.type = u[3];
  h.flags = u[4];
  h.stream = readUint32(p + 5) & 0x7fffffffu;
  return h;
}

namespace {

void appendUint32(std::string& out, std::uint32_t v) {
  const char bytes[4] = {static_cast<char>(v >> 24), static_cast<char>(v >> 16),
                         static_cast<char>(v >> 8), static_cast<char>(v)};
  out.append(bytes, 4);
}

}  // namespace

void appendFrameHeader(std::string& out, std::uint32_t length, std::uint8_t type,
                       std::uint8_t flags, std::uint32_t stream) {
  const char bytes[5] = {static_cast<char>(length >> 16), static_cast<char>(length >> 8),
                         static_cast<char>(length), static_cast<char>(type),
                         static_cast<char>(flags)};
  out.append(bytes, 5);
  appendUint32(out, stream & 0x7fffffffu);
}

void appendWindowUpdate(std::string& out, std::uint32_t stream, std::uint32_t increment) {
  appendFrameHeader(out, 4, kWindowUpdate, 0, stream);
  appendUint32(out, increment & 0x7fffffffu);
}

void appendRstStream(std::string& out, std::uint32_t stream, std::uint32_t error) {
  appendFrameHeader(out, 4, kRstStream, 0, stream);
  appendUint32(out, error);
}

void appendGoaway(std::string& out, std::uint32_t last_stream, std::uint32_t error) {
  appendFrameHeader(out, 8, kGoaway, 0, 0);
  appendUint32(out, last_stream & 0x7fffffffu);
  appendUint32(out, error);
}

void appendSettings(std::string& out,
                    std::initializer_list<std::pair<std::uint16_t, std::uint32_t>> settings) {
  appendFrameHeader(out, static_cast<std::uint32_t>(settings.size() * 6), kSettings, 0, 0);
  for (const auto& [id, value] : settings) {
    out.push_back(static_cast<char>(id >> 8));
    out.push_back(static_cast<char>(id));
    appendUint32(out, value);
  }
}

void appendHeaderBlock(std::string& out, std::uint32_t stream, std::string_view block,
                       bool end_stream) {
  std::uint8_t type = kHeaders;
  std::uint8_t flags = end_stream ? kEndStream : 0;
  do {
    const std::size_t n = std::min<std::size_t>(block.size(), kDefaultMaxFrameSize);
    const bool last = n == block.size();
    appendFrameHeader(out, static_cast<std::uint32_t>(n), type,
                      static_cast<std::uint8_t>(flags | (last ? kEndHeaders : 0)), stream);
    out.append(block.substr(0, n));
    block.remove_prefix(n);
    type = kContinuation;
    flags = 0;
  } while (!block.empty());
}

std::optional<std::string_view> framePayload(const FrameHeader& h, std::string_view payload) {
  std::size_t pad = 0;
  if (h.flags & kPadded) {
    if (payload.empty())
      return std::nullopt;
    pad = static_cast<std::uint8_t>(payload[0]);
    payload.remove_prefix(1);
  }
  if (h.type == kHeaders && (h.flags & kPriorityFlag)) {
    if (payload.size() < 5)
      return std::nullopt;
    payload.remove_prefix(5);
  }
  if (pad > payload.size())
    return std::nullopt;
  return payload.substr(0, payload.size() - pad);
}

}  // namespace koord::h2
