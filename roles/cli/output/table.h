// kubectl's table layout for the operator commands: upper-case headers, columns left-aligned
// and separated by three spaces, "<none>" where a row has no value.
#pragma once

#include <string>
#include <vector>

namespace koord::roles::cli {

class Table {
 public:
  explicit Table(std::vector<std::string> headers) : headers_(std::move(headers)) {}
  /// Cells past the headers are dropped, missing ones print as "<none>".
  void addRow(std::vector<std::string> cells);
  std::size_t rows() const { return rows_.size(); }
  /// The whole table, each line ending in a newline (the header alone when there are no rows).
  std::string render() const;

 private:
  std::vector<std::string> headers_;
  std::vector<std::vector<std::string>> rows_;
};

}  // namespace koord::roles::cli
