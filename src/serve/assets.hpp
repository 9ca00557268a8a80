// The web explorer's static files (src/serve/web/), compiled into the binary by cmake/embed.cmake
// so that `retra serve` needs no files beside it and no network. Thread safety: immutable data.
#pragma once

#include <string_view>

namespace retra::serve {

struct Asset {
  std::string_view name;  // "app.js"
  std::string_view type;  // its Content-Type
  std::string_view data;
};

// The asset of that exact name, or nullptr.
const Asset* find_asset(std::string_view name);

}  // namespace retra::serve
