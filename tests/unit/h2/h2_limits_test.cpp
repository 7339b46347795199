// What a misbehaving HTTP/2 peer can make koord's gRPC unary server (the hook server) hold, over
// a real unix socket from a raw client: an HPACK bomb, endless CONTINUATION, too many streams at
// once, a PING flood from a peer that does not read; and the mode its socket is created with
// whatever the umask. The runtime-proxy's relay meets the same peer in
// tests/unit/runtime_proxy/relay_h2_limits_test.cpp.
#include <catch2/catch.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "file_mode.h"
#include "h2_raw_peer.h"
#include "koord/h2/frame.h"
#include "koord/h2/grpc_unary_server.h"
#include "koord/h2/limits.h"
#include "temp_tree.h"

using namespace koord::h2;
using koord::testing::RawH2Peer;
using koord::testing::TempTree;

namespace {

struct EchoServer {
  explicit EchoServer(const std::string& socket, unsigned mode = 0600) {
    server.addMethod("/test.Hooks/Echo", [](std::string_view request, std::string& response) {
      response = request;
      return GrpcStatus{};
    });
    server.start(socket, mode);
  }
  GrpcUnaryServer server;
};

// A temp dir with the hook server's socket in it.
struct HookSocket {
  TempTree dir{"koord-h2"};
  std::string path = dir.path("hooks.sock").string();
};

// The hook server, and a raw peer that has seen its SETTINGS acknowledged.
struct HookServerAndPeer {
  HookSocket socket;
  EchoServer hooks{socket.path};
  RawH2Peer peer{socket.path, /*wait_for_ack=*/true};
};

}  // namespace

TEST_CASE("h2 limits: an HPACK bomb ends the connection with ENHANCE_YOUR_CALM",
          "[runtime-proxy][h2]") {
  SECTION("the hook server") {
    HookServerAndPeer h;
    RawH2Peer& peer = h.peer;
    REQUIRE(peer.send(koord::testing::hpackBomb()));
    CHECK(peer.goaway() == kEnhanceYourCalm);
  }
}

TEST_CASE("h2 limits: CONTINUATION past the header list limit ends the connection",
          "[runtime-proxy][h2]") {
  SECTION("the hook server") {
    HookServerAndPeer h;
    RawH2Peer& peer = h.peer;
    koord::testing::continuationFlood(peer);
    CHECK(peer.goaway() == kEnhanceYourCalm);
  }
}

TEST_CASE("h2 limits: SETTINGS_MAX_CONCURRENT_STREAMS is advertised and enforced",
          "[runtime-proxy][h2]") {
  const int streams = static_cast<int>(kMaxConcurrentStreams) + 1;
  const auto last = static_cast<std::uint32_t>(2 * (streams - 1) + 1);
  SECTION("the hook server") {
    HookServerAndPeer h;
    RawH2Peer& peer = h.peer;
    CHECK(peer.advertises(kMaxConcurrentStreamsSetting, kMaxConcurrentStreams));
    CHECK(peer.advertises(kMaxHeaderListSizeSetting, kMaxHeaderListSize));
    CHECK(koord::testing::openStreams(peer, streams, "/test.Hooks/Echo") ==
          std::vector<std::uint32_t>{last});
  }
}

TEST_CASE("h2 limits: a peer that floods PINGs and does not read is cut off",
          "[runtime-proxy][h2]") {
  SECTION("the hook server") {
    HookServerAndPeer h;
    RawH2Peer& peer = h.peer;
    koord::testing::pingFlood(peer);
    CHECK(peer.ends());
  }
}

TEST_CASE("h2 limits: sockets get their mode whatever the umask", "[runtime-proxy][h2]") {
  SECTION("the hook server's socket: 0600 by default") {
    HookSocket socket;
    std::optional<EchoServer> hooks;
    {
      koord::testing::ScopedUmask open_to_all(0);
      hooks.emplace(socket.path);
    }
    CHECK(koord::testing::modeOf(socket.path) == 0600);
  }
}
