// gRPC's callback machinery held for the whole test process, for test executables that run
// grpc++ servers or clients next to koord's own gRPC code.
#pragma once

namespace koord::testing {

/// Keeps gRPC's callback machinery (the completion queue and threads that run callback-API
/// reactions) alive for the whole test process, as a long-running proxy does. Without it each
/// test starts and stops it; gRPC 1.51 then sometimes frees its queue twice (ASan double-free
/// in grpc_cq_internal_unref on its polling threads, about 1 run in 50).
void holdCallbackMachinery();

}  // namespace koord::testing
