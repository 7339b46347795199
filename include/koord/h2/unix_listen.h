// A listening unix socket created with the permissions its server asks for, whatever the
// process umask: for the sockets of root's node services (the runtime-proxy's CRI socket, the
// koordlet's hook server), where a mode left to the umask decides who may talk to the runtime.
#pragma once

#include <string>
#include <system_error>

namespace koord::h2 {

/// Binds and listens on `path` with `mode` (e.g. 0660), replacing a socket file already there
/// in one step (the caller has checked that nobody serves it). Returns the listening
/// descriptor (close-on-exec), or -1 with `error` set. The path's directory must exist.
int listenUnixSocket(const std::string& path, unsigned mode, std::error_code& error);

}  // namespace koord::h2
