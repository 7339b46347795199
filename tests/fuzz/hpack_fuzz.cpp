// HPACK blocks come from kubelet (through the runtime-proxy's relay) and from hook servers. One
// decoder sees several blocks in a row, as on a connection, so the dynamic table's state carries
// across them; the provider also varies the table limit and the per-list bounds.
#include <fuzzer/FuzzedDataProvider.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "koord/h2/hpack.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  FuzzedDataProvider in(data, size);
  koord::h2::HpackDecoder decoder(in.ConsumeIntegralInRange<std::size_t>(0, 8192),
                                  in.ConsumeIntegralInRange<std::size_t>(0, 1 << 16),
                                  in.ConsumeIntegralInRange<std::size_t>(0, 256));
  koord::h2::HeaderList headers;
  std::string error;
  while (in.remaining_bytes() > 0) {
    if (in.ConsumeBool())
      decoder.setTableSizeLimit(in.ConsumeIntegralInRange<std::size_t>(0, 8192));
    const std::string block = in.ConsumeRandomLengthString(4096);
    const bool ok = in.ConsumeBool() ? decoder.decodeReplacing(block, headers, error)
                                     : decoder.decode(block, headers, error);
    if (!ok)
      break;
  }
  return 0;
}
