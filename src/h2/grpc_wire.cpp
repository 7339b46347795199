#include "koord/h2/grpc_wire.h"

#include <fmt/format.h>

#include "koord/h2/frame.h"

namespace koord::h2 {

std::optional<std::string_view> singleGrpcMessage(std::string_view body) {
  if (body.size() < 5 || body[0] != 0)
    return std::nullopt;
  const std::uint32_t length = readUint32(body.data() + 1);
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

std::optional<std::string_view> headerValue(const HeaderList& headers, std::string_view name) {
  for (const auto& h : headers)
    if (h.name == name)
      return std::string_view(h.value);
  return std::nullopt;
}

HeaderList trailersOnly(GrpcCode code, std::string_view message) {
  HeaderList headers = {{":status", "200"},
                        {"content-type", "application/grpc"},
                        {"grpc-status", std::to_string(static_cast<int>(code))}};
  if (message.empty())
    return headers;
  // gRPC's rule for grpc-message: printable ASCII but '%' as is, everything else as %XX.
  std::string encoded;
  for (const char c : message) {
    const auto u = static_cast<unsigned char>(c);
    if (u >= 0x20 && u <= 0x7e && u != '%')
      encoded.push_back(c);
    else
      encoded += fmt::format("%{:02X}", u);
  }
  headers.push_back({"grpc-message", std::move(encoded)});
  return headers;
}

std::string percentDecode(std::string_view text) {
  auto hex = [](char c) -> int {
    if (c >= '0' && c <= '9')
      return c - '0';
    if (c >= 'a' && c <= 'f')
      return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
      return c - 'A' + 10;
    return -1;
  };
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '%' && i + 2 < text.size()) {
      const int hi = hex(text[i + 1]);
      const int lo = hex(text[i + 2]);
      if (hi >= 0 && lo >= 0) {
        out.push_back(static_cast<char>(hi * 16 + lo));
        i += 2;
        continue;
      }
    }
    out.push_back(text[i]);
  }
  return out;
}

}  // namespace koord::h2
