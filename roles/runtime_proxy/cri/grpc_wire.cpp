#include "cri/grpc_wire.h"

#include <fmt/format.h>

#include "h2/frame.h"

namespace koord::roles::runtime_proxy {

std::optional<std::string_view> singleGrpcMessage(std::string_view body) {
  if (body.size() < 5 || body[0] != 0)
    return std::nullopt;
  const std::uint32_t length = h2::readUint32(body.data() + 1);
  if (body.size() - 5 != length)
    return std::nullopt;
  return body.substr(5);
}

void appendGrpcMessage(std::string& out, std::string_view message) {
  const auto n = static_cast<std::uint32_t>(message.size());
  const char prefix[5] = {0, static_cast<char>(n >> 24), static_cast<char>(n >> 16),
                          static_cast<char>(n >> 8), static_cast<char>(n)};
  out.append(prefix, 5);
  out.append(message);
}

std::optional<std::string_view> headerValue(const h2::HeaderList& headers, std::string_view name) {
  for (const auto& h : headers)
    if (h.name == name)
      return std::string_view(h.value);
  return std::nullopt;
}

h2::HeaderList trailersOnly(int code, std::string_view message) {
  // gRPC's rule for grpc-message: printable ASCII but '%' as is, everything else as %XX.
  std::string encoded;
  for (const char c : message) {
    const auto u = static_cast<unsigned char>(c);
    if (u >= 0x20 && u <= 0x7e && u != '%')
      encoded.push_back(c);
    else
      encoded += fmt::format("%{:02X}", u);
  }
  return {{":status", "200"},
          {"content-type", "application/grpc"},
          {"grpc-status", std::to_string(code)},
          {"grpc-message", std::move(encoded)}};
}

}  // namespace koord::roles::runtime_proxy
