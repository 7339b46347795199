// Taking over a unix socket path a server will listen on: what a role that serves gRPC on a
// node socket (runtime-proxy, the koordlet's hook server) must check before it binds.
#pragma once

#include <string>

namespace koord::app {

/// Creates the path's directory (or, with `create_directory` false, requires it), removes a
/// socket file nobody serves (a server that was killed), and throws ConfigError when another
/// process still serves it or when the path is something other than a socket (left alone).
void prepareUnixSocketPath(const std::string& path, bool create_directory = true);

/// Whether a process accepts connections on the unix socket at `path`.
bool unixSocketServed(const std::string& path);

}  // namespace koord::app
