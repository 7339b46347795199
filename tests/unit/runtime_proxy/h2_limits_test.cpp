// What a misbehaving HTTP/2 peer can make koord's HTTP/2 code hold, against the relay (as
// kubelet) and the hook server (as the runtime-proxy), over real unix sockets from a raw
// client: an HPACK bomb, endless CONTINUATION, too many streams at once, a PING flood from a
// peer that does not read; and the modes the sockets are created with whatever the umask.
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "cri/cri_proxy_server.h"
#include "koord/h2/frame.h"
#include "koord/h2/grpc_unary_server.h"
#include "koord/h2/hpack.h"
#include "koord/h2/limits.h"
#include "test_cri_backend.h"

using namespace koord::roles::runtime_proxy;
using namespace koord::h2;
using proxy_test::Sockets;
using proxy_test::TempDir;
using proxy_test::TestCriBackend;

namespace {

struct Frame {
  FrameHeader h;
  std::string payload;
};

// A client that writes frames as given and reads what comes back, with a 5 s read timeout.
// It starts as an HTTP/2 client does and waits for the server's SETTINGS (and, with
// `wait_for_ack`, the acknowledgement of its own), so that the server is between writes when
// what a test sends arrives: a GOAWAY is not sent in the middle of a write.
class RawPeer {
 public:
  explicit RawPeer(const std::string& socket, bool wait_for_ack) {
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

  bool advertises(std::uint16_t id, std::uint32_t value) const {
    for (const auto& [i, v] : settings_)
      if (i == id && v == value)
        return true;
    return false;
  }
  ~RawPeer() { ::close(fd_); }
  RawPeer(const RawPeer&) = delete;
  RawPeer& operator=(const RawPeer&) = delete;

  // false once the other end is gone.
  bool send(std::string_view bytes) {
    while (!bytes.empty()) {
      const ssize_t n = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
      if (n <= 0)
        return false;
      bytes.remove_prefix(static_cast<std::size_t>(n));
    }
    return true;
  }

  // The next frame; nullopt at the end of the connection (eof() then true) or after 5 s.
  std::optional<Frame> next() {
    while (true) {
      if (in_.size() >= kFrameHeaderSize) {
        const FrameHeader h = parseFrameHeader(in_.data());
        if (in_.size() >= kFrameHeaderSize + h.length) {
          Frame f{h, in_.substr(kFrameHeaderSize, h.length)};
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

  // The error code of the GOAWAY the peer ends with, or nullopt when the connection stays open
  // (5 s without a frame) or ends without one.
  std::optional<std::uint32_t> goaway() {
    while (auto f = next())
      if (f->h.type == kGoaway && f->payload.size() >= 8)
        return readUint32(f->payload.data() + 4);
    return std::nullopt;
  }

  // Whether the connection ends (rather than staying open 5 s without a frame).
  bool ends() {
    while (next()) {
    }
    return eof_;
  }

 private:
  int fd_ = -1;
  std::string in_;
  bool eof_ = false;
  std::vector<std::pair<std::uint16_t, std::uint32_t>> settings_;
};

std::string requestHeaders(std::uint32_t stream, const std::string& path) {
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

// One 4 KB dynamic table entry, then one-octet references to it: a block of about 8 KB that
// decodes to a 16 MB header list.
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

// A header block that never ends: HEADERS without END_HEADERS, then 2 MiB of CONTINUATION.
bool continuationFlood(RawPeer& peer) {
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

// 200,000 PINGs, 3.4 MB, sent without reading a byte of the answers.
void pingFlood(RawPeer& peer) {
  std::string pings;
  for (int i = 0; i < 10'000; ++i) {
    appendFrameHeader(pings, 8, kPing, 0, 0);
    pings.append(8, static_cast<char>(i));
  }
  for (int i = 0; i < 20 && peer.send(pings); ++i) {
  }
}

// The first stream the peer refused with REFUSED_STREAM after `streams` requests were opened
// at once (none ended), if any within 3 s.
std::vector<std::uint32_t> openStreams(RawPeer& peer, int streams, const std::string& path) {
  std::vector<std::uint32_t> refused;
  std::string out;
  for (int i = 0; i < streams; ++i)
    out += requestHeaders(static_cast<std::uint32_t>(2 * i + 1), path);
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

struct Proxy {
  Sockets s;
  TestCriBackend backend{s.runtime, s.image};
  CriProxyServer proxy{{s.proxy, s.runtime, s.runtime}, nullptr};
  Proxy() { proxy.start(); }
};

unsigned modeOf(const std::string& path) {
  struct stat st {};
  REQUIRE(::stat(path.c_str(), &st) == 0);
  return st.st_mode & 07777;
}

// Restores the umask however the test ends.
struct Umask {
  explicit Umask(mode_t mask) : old(::umask(mask)) {}
  ~Umask() { ::umask(old); }
  mode_t old;
};

}  // namespace

TEST_CASE("h2 limits: an HPACK bomb ends the connection with ENHANCE_YOUR_CALM",
          "[runtime-proxy][h2]") {
  SECTION("the hook server") {
    TempDir dir;
    EchoServer hooks(dir.path() + "/hooks.sock");
    RawPeer peer(dir.path() + "/hooks.sock", /*wait_for_ack=*/true);
    REQUIRE(peer.send(hpackBomb()));
    CHECK(peer.goaway() == kEnhanceYourCalm);
  }
  SECTION("the relay, from kubelet") {
    Proxy p;
    RawPeer kubelet(p.s.proxy, /*wait_for_ack=*/false);
    REQUIRE(kubelet.send(hpackBomb()));
    CHECK(kubelet.goaway() == kEnhanceYourCalm);
  }
}

TEST_CASE("h2 limits: CONTINUATION past the header list limit ends the connection",
          "[runtime-proxy][h2]") {
  SECTION("the hook server") {
    TempDir dir;
    EchoServer hooks(dir.path() + "/hooks.sock");
    RawPeer peer(dir.path() + "/hooks.sock", /*wait_for_ack=*/true);
    continuationFlood(peer);
    CHECK(peer.goaway() == kEnhanceYourCalm);
  }
  SECTION("the relay, from kubelet") {
    Proxy p;
    RawPeer kubelet(p.s.proxy, /*wait_for_ack=*/false);
    continuationFlood(kubelet);
    CHECK(kubelet.goaway() == kEnhanceYourCalm);
  }
}

TEST_CASE("h2 limits: SETTINGS_MAX_CONCURRENT_STREAMS is advertised and enforced",
          "[runtime-proxy][h2]") {
  const int streams = static_cast<int>(kMaxConcurrentStreams) + 1;
  const auto last = static_cast<std::uint32_t>(2 * (streams - 1) + 1);
  SECTION("the hook server") {
    TempDir dir;
    EchoServer hooks(dir.path() + "/hooks.sock");
    RawPeer peer(dir.path() + "/hooks.sock", /*wait_for_ack=*/true);
    CHECK(peer.advertises(kMaxConcurrentStreamsSetting, kMaxConcurrentStreams));
    CHECK(peer.advertises(kMaxHeaderListSizeSetting, kMaxHeaderListSize));
    CHECK(openStreams(peer, streams, "/test.Hooks/Echo") == std::vector<std::uint32_t>{last});
  }
  SECTION("the relay, toward kubelet") {
    Proxy p;
    RawPeer kubelet(p.s.proxy, /*wait_for_ack=*/false);
    CHECK(kubelet.advertises(kMaxConcurrentStreamsSetting, kMaxConcurrentStreams));
    CHECK(kubelet.advertises(kMaxHeaderListSizeSetting, kMaxHeaderListSize));
    CHECK(openStreams(kubelet, streams, "/runtime.v1.RuntimeService/Version") ==
          std::vector<std::uint32_t>{last});
  }
}

TEST_CASE("h2 limits: a peer that floods PINGs and does not read is cut off",
          "[runtime-proxy][h2]") {
  SECTION("the hook server") {
    TempDir dir;
    EchoServer hooks(dir.path() + "/hooks.sock");
    RawPeer peer(dir.path() + "/hooks.sock", /*wait_for_ack=*/true);
    pingFlood(peer);
    CHECK(peer.ends());
  }
  SECTION("the relay, before the runtime is dialled (it answers PINGs itself)") {
    Proxy p;
    RawPeer kubelet(p.s.proxy, /*wait_for_ack=*/false);
    pingFlood(kubelet);
    CHECK(kubelet.ends());
  }
}

TEST_CASE("h2 limits: sockets get their mode whatever the umask", "[runtime-proxy][h2]") {
  SECTION("the proxy's CRI socket: 0660, in a 0755 directory") {
    Sockets s;
    TestCriBackend backend(s.runtime, s.image);
    CriProxyServer proxy(s.config(), nullptr);
    {
      Umask open_to_all(0);
      proxy.start();
    }
    CHECK(modeOf(s.proxy) == 0660);
    CHECK(modeOf(s.dir.path() + "/proxy") == 0755);
    // Nothing is left behind from the private directory it was bound in.
    int entries = 0;
    for ([[maybe_unused]] const auto& e :
         std::filesystem::directory_iterator(s.dir.path() + "/proxy"))
      ++entries;
    CHECK(entries == 1);
  }
  SECTION("the hook server's socket: 0600 by default") {
    TempDir dir;
    const std::string socket = dir.path() + "/hooks.sock";
    std::optional<EchoServer> hooks;
    {
      Umask open_to_all(0);
      hooks.emplace(socket);
    }
    CHECK(modeOf(socket) == 0600);
  }
}
