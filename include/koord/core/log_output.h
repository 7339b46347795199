// Where log lines go and how they look: klog's --logtostderr, --log_file, --log_dir,
// --skip_headers, ... and component-base's --logging-format, set once at startup.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

#include "koord/core/log.h"

namespace koord::log {

struct Output {
  bool to_stderr = true;        // --logtostderr
  bool also_to_stderr = false;  // --alsologtostderr (with a file)
  /// With a file, lines of this severity and above also go to stderr (--stderrthreshold, klog's
  /// numbers: 0 INFO, 1 WARNING, 2 ERROR, 3 FATAL, which koord never logs).
  int stderr_threshold = 2;
  /// Where lines go when not to_stderr (--log_file, or the file made in --log_dir).
  std::string file;
  /// A name in the file's folder pointed at the file (klog's "<program>.INFO" in --log_dir);
  /// empty for none.
  std::string symlink;
  /// Past this size the file starts over, as klog's --log_file does; 0: no limit.
  std::uint64_t file_max_bytes = 0;
  /// klog's header lines at the top of each new file (off with --skip_log_headers).
  bool file_header = true;
  bool skip_headers = false;    // --skip_headers: the message alone
  bool add_dir_header = false;  // --add_dir_header: the source file's path, not its base name
  bool json = false;            // --logging-format=json: component-base's JSON lines
};

/// Applies `out` to every later line. std::runtime_error (naming the file and why) when the file
/// cannot be opened; the output stays as it was then.
void setOutput(const Output& out);

/// klog's name for the file it makes in --log_dir: "<program>.<host>.<user>.log.INFO.
/// <yyyymmdd-hhmmss>.<pid>", with local time.
std::string logDirFileName(std::string_view program, std::chrono::system_clock::time_point when);

/// One line as component-base's JSON format writes it:
/// {"ts":<ms since the epoch>,"caller":"file:line","msg":"...","v":0} ("v" left out for errors).
std::string formatJsonLine(Severity severity, const char* file, int line, std::string_view message,
                           std::chrono::system_clock::time_point when);

}  // namespace koord::log
