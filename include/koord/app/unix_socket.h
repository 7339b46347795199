// Taking over a unix socket path a server will listen on: what a role that serves gRPC on a
// node socket (runtime-proxy, the koordlet's hook server) must check before it binds.
#pragma once

#include <string>

namespace koord::app {

/// Creates the path's directory (0755; or, with `create_directory` false, requires it), and
/// throws ConfigError when another process still serves a socket there or when the path is
/// something other than a socket (left alone). A socket file nobody serves (a server that was
/// killed) is left for h2::listenUnixSocket to replace in one rename.
void prepareUnixSocketPath(const std::string& path, bool create_directory = true);

/// Whether a process accepts connections on the unix socket at `path`.
bool unixSocketServed(const std::string& path);

}  // namespace koord::app
