// JSON text and error objects as every report prints them. Thread safety: pure functions.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace retra {

// Two-space indent; bytes that are not UTF-8 (an error message may quote what a user typed) are
// replaced by U+FFFD instead of throwing.
inline std::string dump_json(const nlohmann::json& j, int indent = 2) {
  return j.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

// An error as every JSON answer gives it (the CLI's --json, the explorer's API):
// {"ok": false, "error": {"code", "message"}}.
inline nlohmann::json error_json(std::string_view code, const std::string& message) {
  return {{"ok", false}, {"error", {{"code", std::string(code)}, {"message", message}}}};
}

}  // namespace retra
