// What koord's HTTP/2 code (the runtime-proxy's relay, the hook client and server) lets a peer
// make it hold. The peers are root's own (kubelet, containerd, a hook server), but a bug in one
// must not grow the proxy's or the koordlet's memory without end and take the node's CRI down:
// each bound is a connection or stream error (RFC 9113), logged, never a crash.
#pragma once

#include <cstddef>
#include <cstdint>

namespace koord::h2 {

/// A decoded header list, counted as SETTINGS_MAX_HEADER_LIST_SIZE counts it (names, values and
/// 32 per field), and an encoded header block (HEADERS plus CONTINUATION) too: no encoder makes
/// a block larger than the list it encodes, each field costing 32 in the list and a few octets
/// of prefixes in the block. CRI's headers are a few hundred bytes and a runtime's grpc-message
/// a few KB; 1 MiB leaves room for both and caps an HPACK bomb (one octet naming a 4 KB table
/// entry, thousands of times) at 1 MiB instead of the 16 MiB and more it would decode to.
inline constexpr std::size_t kMaxHeaderListSize = 1u << 20;
/// Fields in one header list: a CRI call carries about ten.
inline constexpr std::size_t kMaxHeaderFields = 1024;
/// Streams a peer may have open at once on one connection (SETTINGS_MAX_CONCURRENT_STREAMS,
/// advertised and enforced: a stream beyond it is refused with RST_STREAM REFUSED_STREAM, which
/// gRPC clients retry). kubelet's calls at once are a few per pod it runs.
inline constexpr std::uint32_t kMaxConcurrentStreams = 1024;
/// Frames owed to a peer that it caused by sending (PING and SETTINGS acknowledgements,
/// RST_STREAMs) and not yet handed to the socket: a peer that sends them without reading would
/// grow the queue without end. nghttp2's limit on the same queue; beyond it GOAWAY
/// ENHANCE_YOUR_CALM.
inline constexpr std::size_t kMaxQueuedControlFrames = 1000;
/// Bytes waiting for a peer that does not read. Flow control keeps DATA to what the peer granted
/// (grpc-go grants at most 16 MiB a connection) and a gRPC message is at most 16 MiB; past 64 MiB
/// the peer is not reading and the connection ends with GOAWAY ENHANCE_YOUR_CALM.
inline constexpr std::size_t kMaxUnwrittenBytes = 64u << 20;

}  // namespace koord::h2
