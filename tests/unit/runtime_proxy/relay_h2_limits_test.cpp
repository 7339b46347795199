// What a misbehaving HTTP/2 peer (as kubelet) can make the runtime-proxy's relay hold, over real
// unix sockets from a raw client: an HPACK bomb, endless CONTINUATION, too many streams at once,
// a PING flood from a peer that does not read; and the modes the proxy's socket is created with
// whatever the umask. The hook server meets the same peer in tests/unit/h2/h2_limits_test.cpp.
#include <catch2/catch.hpp>

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "cri/cri_proxy_server.h"
#include "file_mode.h"
#include "h2_raw_peer.h"
#include "koord/h2/frame.h"
#include "koord/h2/limits.h"
#include "test_cri_backend.h"

using namespace koord::roles::runtime_proxy;
using namespace koord::h2;
using koord::testing::RawH2Peer;
using proxy_test::Sockets;
using proxy_test::TestCriBackend;

namespace {

struct Proxy {
  Sockets s;
  TestCriBackend backend{s.runtime, s.image};
  CriProxyServer proxy{{s.proxy, s.runtime, s.runtime}, nullptr};
  Proxy() { proxy.start(); }
};

// The relay, and a raw peer in kubelet's place (the relay answers its SETTINGS at once).
struct ProxyAndKubelet {
  Proxy p;
  RawH2Peer kubelet{p.s.proxy, /*wait_for_ack=*/false};
};

}  // namespace

TEST_CASE("h2 limits: an HPACK bomb ends the connection with ENHANCE_YOUR_CALM",
          "[runtime-proxy][h2]") {
  SECTION("the relay, from kubelet") {
    ProxyAndKubelet r;
    RawH2Peer& kubelet = r.kubelet;
    REQUIRE(kubelet.send(koord::testing::hpackBomb()));
    CHECK(kubelet.goaway() == kEnhanceYourCalm);
  }
}

TEST_CASE("h2 limits: CONTINUATION past the header list limit ends the connection",
          "[runtime-proxy][h2]") {
  SECTION("the relay, from kubelet") {
    ProxyAndKubelet r;
    RawH2Peer& kubelet = r.kubelet;
    koord::testing::continuationFlood(kubelet);
    CHECK(kubelet.goaway() == kEnhanceYourCalm);
  }
}

TEST_CASE("h2 limits: SETTINGS_MAX_CONCURRENT_STREAMS is advertised and enforced",
          "[runtime-proxy][h2]") {
  const int streams = static_cast<int>(kMaxConcurrentStreams) + 1;
  const auto last = static_cast<std::uint32_t>(2 * (streams - 1) + 1);
  SECTION("the relay, toward kubelet") {
    ProxyAndKubelet r;
    RawH2Peer& kubelet = r.kubelet;
    CHECK(kubelet.advertises(kMaxConcurrentStreamsSetting, kMaxConcurrentStreams));
    CHECK(kubelet.advertises(kMaxHeaderListSizeSetting, kMaxHeaderListSize));
    CHECK(koord::testing::openStreams(kubelet, streams, "/runtime.v1.RuntimeService/Version") ==
          std::vector<std::uint32_t>{last});
  }
}

TEST_CASE("h2 limits: a peer that floods PINGs and does not read is cut off",
          "[runtime-proxy][h2]") {
  SECTION("the relay, before the runtime is dialled (it answers PINGs itself)") {
    ProxyAndKubelet r;
    RawH2Peer& kubelet = r.kubelet;
    koord::testing::pingFlood(kubelet);
    CHECK(kubelet.ends());
  }
}

TEST_CASE("h2 limits: sockets get their mode whatever the umask", "[runtime-proxy][h2]") {
  SECTION("the proxy's CRI socket: 0660, in a 0755 directory") {
    Sockets s;
    TestCriBackend backend(s.runtime, s.image);
    CriProxyServer proxy(s.config(), nullptr);
    {
      koord::testing::ScopedUmask open_to_all(0);
      proxy.start();
    }
    CHECK(koord::testing::modeOf(s.proxy) == 0660);
    CHECK(koord::testing::modeOf(s.dir.path("proxy").string()) == 0755);
    // Nothing is left behind from the private directory it was bound in.
    int entries = 0;
    for ([[maybe_unused]] const auto& e :
         std::filesystem::directory_iterator(s.dir.path("proxy").string()))
      ++entries;
    CHECK(entries == 1);
  }
}
