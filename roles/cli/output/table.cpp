#include "output/table.h"

#include <algorithm>

namespace koord::roles::cli {

void Table::addRow(std::vector<std::string> cells) {
  cells.resize(headers_.size());
  for (auto& c : cells) {
    if (c.empty())
      c = "<none>";
  }
  rows_.push_back(std::move(cells));
}

std::string Table::render() const {
  std::vector<std::size_t> width(headers_.size(), 0);
  for (std::size_t i = 0; i < headers_.size(); ++i) {
    width[i] = headers_[i].size();
    for (const auto& row : rows_)
      width[i] = std::max(width[i], row[i].size());
  }
  std::string out;
  auto line = [&](const std::vector<std::string>& cells) {
    std::string text;
    for (std::size_t i = 0; i < cells.size(); ++i) {
      text += cells[i];
      if (i + 1 < cells.size())
        text.append(width[i] - cells[i].size() + 3, ' ');
    }
    out += text;
    out += '\n';
  };
  line(headers_);
  for (const auto& row : rows_)
    line(row);
  return out;
}

}  // namespace koord::roles::cli
