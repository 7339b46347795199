// A unary call's body and its grpc-message trailer come from the peer (koordlet or a hook
// server): the 5-byte message framing and grpc-message's percent-decoding.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "koord/h2/grpc_wire.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace koord::h2;
  const std::string_view body(reinterpret_cast<const char*>(data), size);
  if (auto message = singleGrpcMessage(body)) {
    // What was taken out must frame back to the same body.
    std::string framed;
    appendGrpcMessage(framed, *message);
    if (framed != body)
      std::abort();
  }
  (void)percentDecode(body);
  const HeaderList trailers = trailersOnly(GrpcCode::kInternal, body);
  auto message = headerValue(trailers, "grpc-message");
  // Whatever koord percent-encodes it must decode to the same text.
  if (message && percentDecode(*message) != body)
    std::abort();
  return 0;
}
