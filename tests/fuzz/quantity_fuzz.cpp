// Quantity::parse reads requests, limits and annotations from any pod spec. Whatever it accepts
// must print and re-parse to the same value, or a value would drift each time it is written back.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "koord/kube/quantity.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using koord::kube::Quantity;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto q = Quantity::parse(text);
  if (!q)
    return 0;
  const std::string printed = q->toString();
  auto again = Quantity::parse(printed);
  if (!again || *again != *q)
    std::abort();
  (void)q->value();
  (void)q->milliValue();
  return 0;
}
