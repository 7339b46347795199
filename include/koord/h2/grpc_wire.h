// gRPC over HTTP/2 as koord's relay, client and server write and read it: status codes, the
// length-prefixed message, the status in trailers, and grpc-message's percent-encoding.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "koord/h2/hpack.h"

namespace koord::h2 {

enum class GrpcCode : int {
  kOk = 0,
  kCancelled = 1,
  kUnknown = 2,
  kInvalidArgument = 3,
  kDeadlineExceeded = 4,
  kNotFound = 5,
  kPermissionDenied = 7,
  kResourceExhausted = 8,
  kUnimplemented = 12,
  kInternal = 13,
  kUnavailable = 14,
  kUnauthenticated = 16,
};

/// A call's outcome: the code and its message.
struct GrpcStatus {
  GrpcCode code = GrpcCode::kOk;
  std::string message;

  bool ok() const { return code == GrpcCode::kOk; }
};

/// The largest message koord's client and server take (gRPC's default receive limit).
inline constexpr std::size_t kMaxGrpcMessage = 4u << 20;

/// The one uncompressed message a unary call's body holds (5-byte prefix: flag, length);
/// nullopt for a compressed message, several messages, or a body that is cut short.
std::optional<std::string_view> singleGrpcMessage(std::string_view body);

/// `message` behind its 5-byte prefix (not compressed), appended to `out`.
void appendGrpcMessage(std::string& out, std::string_view message);

/// The value of a header, or nullopt.
std::optional<std::string_view> headerValue(const HeaderList& headers, std::string_view name);

/// A call's whole answer in one header block (gRPC's "trailers-only" response): :status 200,
/// content-type, grpc-status and, when there is one, grpc-message percent-encoded as gRPC wants.
HeaderList trailersOnly(GrpcCode code, std::string_view message);

/// grpc-message's percent-encoding undone; a malformed escape is kept as it is.
std::string percentDecode(std::string_view text);

}  // namespace koord::h2
