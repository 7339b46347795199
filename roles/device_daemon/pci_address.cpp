#include "pci_address.h"

#include <fmt/format.h>

#include <charconv>

namespace koord::roles::device_daemon {

namespace {

// Exactly the whole of `text`, as hex, with between `min_digits` and `max_digits` digits.
std::optional<unsigned> hexPart(std::string_view text, std::size_t min_digits,
                                std::size_t max_digits) {
  if (text.size() < min_digits || text.size() > max_digits)
    return std::nullopt;
  unsigned value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value, 16);
  if (ec != std::errc() || end != text.data() + text.size())
    return std::nullopt;
  return value;
}

}  // namespace

std::optional<std::string> normalizePciAddress(std::string_view address) {
  auto colon1 = address.find(':');
  if (colon1 == std::string_view::npos)
    return std::nullopt;
  auto colon2 = address.find(':', colon1 + 1);
  auto dot = address.find('.', colon1 + 1);
  if (colon2 == std::string_view::npos || dot == std::string_view::npos || dot < colon2)
    return std::nullopt;
  auto domain = hexPart(address.substr(0, colon1), 1, 8);
  auto bus = hexPart(address.substr(colon1 + 1, colon2 - colon1 - 1), 2, 2);
  auto device = hexPart(address.substr(colon2 + 1, dot - colon2 - 1), 2, 2);
  auto function = hexPart(address.substr(dot + 1), 1, 1);
  if (!domain || !bus || !device || !function || *device > 0x1f || *function > 7)
    return std::nullopt;
  return fmt::format("{:04x}:{:02x}:{:02x}.{:x}", *domain, *bus, *device, *function);
}

}  // namespace koord::roles::device_daemon
