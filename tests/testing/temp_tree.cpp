#include "temp_tree.h"

#include <stdlib.h>

#include <fstream>
#include <sstream>
#include <stdexcept>

namespace koord::testing {

namespace fs = std::filesystem;

TempTree::TempTree(std::string_view prefix) {
  std::string tmpl = (fs::temp_directory_path() / (std::string(prefix) + "-XXXXXX")).string();
  if (::mkdtemp(tmpl.data()) == nullptr)
    throw std::runtime_error("mkdtemp " + tmpl + " failed");
  root_ = tmpl;
}

TempTree::~TempTree() {
  std::error_code ec;
  fs::remove_all(root_, ec);
}

void TempTree::write(std::string_view relative, std::string_view content) const {
  auto p = path(relative);
  fs::create_directories(p.parent_path());
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out << content;
  if (!out)
    throw std::runtime_error("write " + p.string() + " failed");
}

std::string TempTree::read(std::string_view relative) const {
  std::ifstream in(path(relative), std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void TempTree::mkdirs(std::string_view relative) const {
  fs::create_directories(path(relative));
}

void TempTree::symlink(std::string_view relative, const fs::path& target) const {
  auto p = path(relative);
  fs::create_directories(p.parent_path());
  fs::create_symlink(target, p);
}

}  // namespace koord::testing
