// JSON text as every report prints it. Thread safety: pure function.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace retra {

// Two-space indent; bytes that are not UTF-8 (an error message may quote what a user typed) are
// replaced by U+FFFD instead of throwing.
inline std::string dump_json(const nlohmann::json& j, int indent = 2) {
  return j.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace retra
