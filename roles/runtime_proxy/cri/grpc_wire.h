// gRPC over HTTP/2 as far as the relay needs it: a unary message out of its length-prefixed
// frame and back in, a call's status from its trailers, and the trailers-only error answer.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "h2/hpack.h"

namespace koord::roles::runtime_proxy {

/// The one uncompressed message a unary call's body holds (5-byte prefix: flag, length);
/// nullopt for a compressed message, several messages, or a body that is cut short.
std::optional<std::string_view> singleGrpcMessage(std::string_view body);

/// `message` behind its 5-byte prefix, appended to `out`.
void appendGrpcMessage(std::string& out, std::string_view message);

/// The value of a header, or nullopt.
std::optional<std::string_view> headerValue(const h2::HeaderList& headers, std::string_view name);

/// A call's whole answer in one header block (gRPC's "trailers-only" response): :status 200,
/// content-type, grpc-status `code` and grpc-message `message`, percent-encoded as gRPC wants.
h2::HeaderList trailersOnly(int code, std::string_view message);

}  // namespace koord::roles::runtime_proxy
