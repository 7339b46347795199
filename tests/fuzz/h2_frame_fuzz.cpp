// An HTTP/2 byte stream as a peer (kubelet, a hook server) sends it: frame headers, padding and
// priority fields, SETTINGS entries, and header blocks joined from HEADERS and CONTINUATION frames
// into one HPACK decoder, the way koord's connection code takes a stream apart.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "koord/h2/frame.h"
#include "koord/h2/hpack.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace koord::h2;
  std::string_view in(reinterpret_cast<const char*>(data), size);
  HpackDecoder decoder;
  HeaderList headers;
  std::string block;
  std::string error;
  while (in.size() >= 9) {
    const FrameHeader h = parseFrameHeader(in.data());
    in.remove_prefix(9);
    if (h.length > in.size() || h.length > kMaxFrameSize)
      break;
    const std::string_view payload = in.substr(0, h.length);
    in.remove_prefix(h.length);
    switch (h.type) {
      case kData:
        (void)framePayload(h, payload);
        break;
      case kHeaders:
      case kContinuation: {
        auto fragment = h.type == kHeaders ? framePayload(h, payload) : payload;
        if (!fragment)
          return 0;
        block.append(*fragment);
        if ((h.flags & kEndHeaders) != 0) {
          if (!decoder.decodeReplacing(block, headers, error))
            return 0;
          block.clear();
        }
        break;
      }
      case kSettings:
        forEachSetting(payload, [&](std::uint16_t id, std::uint32_t value) {
          if (id == kHeaderTableSize)
            decoder.setTableSizeLimit(value < 65536 ? value : 65536);
        });
        break;
      default:
        if (payload.size() >= 4)
          (void)readUint32(payload.data());
        break;
    }
  }
  return 0;
}
