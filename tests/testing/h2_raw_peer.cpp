#include "h2_raw_peer.h"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <cerrno>
#include <chrono>
#include <cstring>

#include "koord/h2/hpack.h"

namespace koord::testing {

using namespace koord::h2;

RawH2Peer::RawH2Peer(const std::string& socket, bool wait_for_ack) {
  fd_ = ::socket(AF_UNIX, SOCK_STREAM, 0);
  REQUIRE(fd_ >= 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, socket.c_str(), sizeof addr.sun_path - 1);
  REQUIRE(::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
  timeval timeout{5, 0};
  REQUIRE(::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout) == 0);
  std::string hello(kClientPreface);
  appendSettings(hello, {});
  REQUIRE(send(hello));
  bool acked = !wait_for_ack;
  bool settings = false;
  while (!acked || !settings) {
    auto f = next();
    REQUIRE(f);
    if (f->h.type != kSettings)
      continue;
    if (f->h.flags & kAck) {
      acked = true;
    } else {
      settings = true;
      forEachSetting(f->payload, [&](std::uint16_t id, std::uint32_t value) {
        settings_.emplace_back(id, value);
      });
    }
  }
}

RawH2Peer::~RawH2Peer() {
  ::close(fd_);
}

bool RawH2Peer::advertises(std::uint16_t id, std::uint32_t value) const {
  for (const auto& [i, v] : settings_)
    if (i == id && v == value)
      return true;
  return false;
}

bool RawH2Peer::send(std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t n = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (n <= 0)
      return false;
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

std::optional<H2Frame> RawH2Peer::next() {
  while (true) {
    if (in_.size() >= kFrameHeaderSize) {
      const FrameHeader h = parseFrameHeader(in_.data());
      if (in_.size() >= kFrameHeaderSize + h.length) {
        H2Frame f{h, in_.substr(kFrameHeaderSize, h.length)};
        in_.erase(0, kFrameHeaderSize + h.length);
        return f;
      }
    }
    char buf[64 * 1024];
    const ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
    if (n <= 0) {
      eof_ = n == 0 || errno == ECONNRESET;
      return std::nullopt;
    }
    in_.append(buf, static_cast<std::size_t>(n));
  }
}

std::optional<std::uint32_t> RawH2Peer::goaway() {
  while (auto f = next())
    if (f->h.type == kGoaway && f->payload.size() >= 8)
      return readUint32(f->payload.data() + 4);
  return std::nullopt;
}

bool RawH2Peer::ends() {
  while (next()) {
  }
  return eof_;
}

std::string h2RequestHeaders(std::uint32_t stream, const std::string& path) {
  std::string block;
  hpackEncode({{":method", "POST"},
               {":scheme", "http"},
               {":path", path},
               {":authority", "localhost"},
               {"content-type", "application/grpc"},
               {"te", "trailers"}},
              block);
  std::string out;
  appendHeaderBlock(out, stream, block, /*end_stream=*/false);
  return out;
}

std::string hpackBomb() {
  std::string block = "\x40\x06x-bomb";
  block += "\x7f";  // a 4000-octet value: 127 + 3873, the rest in 7-bit groups
  std::uint32_t rest = 4000 - 127;
  while (rest >= 0x80) {
    block.push_back(static_cast<char>(0x80 | (rest & 0x7f)));
    rest >>= 7;
  }
  block.push_back(static_cast<char>(rest));
  block += std::string(4000, 'a');
  block += std::string(4000, '\xbe');  // indexed field 62: the entry just added
  std::string out;
  appendFrameHeader(out, static_cast<std::uint32_t>(block.size()), kHeaders, kEndHeaders, 1);
  return out + block;
}

bool continuationFlood(RawH2Peer& peer) {
  std::string out;
  appendFrameHeader(out, 1, kHeaders, 0, 1);
  out.push_back('\x82');
  const std::string fragment(kDefaultMaxFrameSize, '\0');
  for (int i = 0; i < 128; ++i) {
    appendFrameHeader(out, kDefaultMaxFrameSize, kContinuation, 0, 1);
    out += fragment;
  }
  return peer.send(out);
}

void pingFlood(RawH2Peer& peer) {
  std::string pings;
  for (int i = 0; i < 10'000; ++i) {
    appendFrameHeader(pings, 8, kPing, 0, 0);
    pings.append(8, static_cast<char>(i));
  }
  for (int i = 0; i < 20 && peer.send(pings); ++i) {
  }
}

std::vector<std::uint32_t> openStreams(RawH2Peer& peer, int streams, const std::string& path) {
  std::vector<std::uint32_t> refused;
  std::string out;
  for (int i = 0; i < streams; ++i)
    out += h2RequestHeaders(static_cast<std::uint32_t>(2 * i + 1), path);
  REQUIRE(peer.send(out));
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(3);
  while (std::chrono::steady_clock::now() < until) {
    auto f = peer.next();
    if (!f)
      break;
    if (f->h.type == kRstStream && readUint32(f->payload.data()) == kRefusedStream) {
      refused.push_back(f->h.stream);
      break;
    }
  }
  return refused;
}

}  // namespace koord::testing
