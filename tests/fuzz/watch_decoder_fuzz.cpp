// The watch body comes from the API server but carries objects any user wrote. The first byte
// picks a chunk size, so the decoder's reassembly of events split across reads is fuzzed too,
// and a small event limit reaches the oversized-line path without megabytes of input.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "koord/kube/watch.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0)
    return 0;
  const std::size_t chunk = data[0] % 64 + 1;
  std::string_view body(reinterpret_cast<const char*>(data) + 1, size - 1);
  koord::kube::WatchDecoder decoder(1024);
  std::size_t events = 0;
  const koord::kube::WatchDecoder::Sink sink = [&](koord::kube::WatchEvent event) {
    ++events;
    (void)koord::kube::toString(event.type);
  };
  const koord::kube::WatchDecoder::SkipSink skip = [](std::string_view) {};
  while (!body.empty()) {
    const auto n = body.size() < chunk ? body.size() : chunk;
    decoder.feed(body.substr(0, n), sink, skip);
    body.remove_prefix(n);
  }
  (void)decoder.pending();
  return 0;
}
