// The server side of one proxied call: unary calls are read whole, passed through the hooks
// when hooked, and forwarded; anything else is pumped message by message both ways.
#pragma once

#include <grpcpp/generic/async_generic_service.h>

#include "cri/call_interceptor.h"
#include "cri/cri_backend.h"
#include "cri/cri_method.h"

namespace koord::roles::runtime_proxy {

/// The reactor gRPC runs the call on; it deletes itself when the call is over. `interceptor`
/// (may be null) is consulted only for hooked unary calls.
grpc::ServerGenericBidiReactor* newForwardReactor(grpc::GenericCallbackServerContext* context,
                                                  const CriMethod& method, CriBackend& backend,
                                                  CallInterceptor* interceptor);

}  // namespace koord::roles::runtime_proxy
