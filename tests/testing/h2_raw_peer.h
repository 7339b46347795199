// A raw HTTP/2 client for tests of what a misbehaving peer can make koord's HTTP/2 servers hold
// (the hook server, the runtime-proxy's relay): frames written as given over a unix socket.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "koord/h2/frame.h"

namespace koord::testing {

struct H2Frame {
  h2::FrameHeader h;
  std::string payload;
};

/// Writes frames as given and reads what comes back, with a 5 s read timeout. It starts as an
/// HTTP/2 client does and waits for the server's SETTINGS (and, with `wait_for_ack`, the
/// acknowledgement of its own), so that the server is between writes when what a test sends
/// arrives: a GOAWAY is not sent in the middle of a write.
class RawH2Peer {
 public:
  RawH2Peer(const std::string& socket, bool wait_for_ack);
  ~RawH2Peer();
  RawH2Peer(const RawH2Peer&) = delete;
  RawH2Peer& operator=(const RawH2Peer&) = delete;

  /// Whether the server's SETTINGS carried `id` = `value`.
  bool advertises(std::uint16_t id, std::uint32_t value) const;
  /// false once the other end is gone.
  bool send(std::string_view bytes);
  /// The next frame; nullopt at the end of the connection or after 5 s.
  std::optional<H2Frame> next();
  /// The error code of the GOAWAY the peer ends with, or nullopt when the connection stays open
  /// (5 s without a frame) or ends without one.
  std::optional<std::uint32_t> goaway();
  /// Whether the connection ends (rather than staying open 5 s without a frame).
  bool ends();

 private:
  int fd_ = -1;
  std::string in_;
  bool eof_ = false;
  std::vector<std::pair<std::uint16_t, std::uint32_t>> settings_;
};

/// A gRPC request's HEADERS on `stream` for `path`, not ending the stream.
std::string h2RequestHeaders(std::uint32_t stream, const std::string& path);

/// One 4 KB dynamic table entry, then one-octet references to it: a block of about 8 KB that
/// decodes to a 16 MB header list.
std::string hpackBomb();

/// A header block that never ends: HEADERS without END_HEADERS, then 2 MiB of CONTINUATION.
bool continuationFlood(RawH2Peer& peer);

/// 200,000 PINGs, 3.4 MB, sent without reading a byte of the answers.
void pingFlood(RawH2Peer& peer);

/// The first stream the peer refused with REFUSED_STREAM after `streams` requests were opened
/// at once (none ended), if any within 3 s.
std::vector<std::uint32_t> openStreams(RawH2Peer& peer, int streams, const std::string& path);

}  // namespace koord::testing
