// List responses stream in over any chunking, and their items are objects users wrote. The first
// byte picks the chunk size and whether the sink stops the decoding after the first item.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include <boost/json/value.hpp>

#include "koord/kube/list_decoder.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0)
    return 0;
  const std::size_t chunk = data[0] % 64 + 1;
  const bool stop_early = (data[0] & 0x80) != 0;
  std::string_view body(reinterpret_cast<const char*>(data) + 1, size - 1);
  koord::kube::ListDecoder decoder([&](const boost::json::value& item) {
    (void)item.kind();
    return !stop_early;
  });
  std::string error;
  bool ok = true;
  while (ok && !body.empty()) {
    const auto n = body.size() < chunk ? body.size() : chunk;
    ok = decoder.feed(body.substr(0, n), error);
    body.remove_prefix(n);
  }
  if (ok && decoder.finish(error))
    (void)decoder.metadata().kind();
  (void)decoder.items();
  return 0;
}
