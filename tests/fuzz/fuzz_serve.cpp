// Fuzz target: the web explorer's request handling (src/serve/explorer.hpp) over real databases
// of every game: a path and query parameters from the input ("path\nkey=value\nkey=value...").
// Every request gets a JSON or page answer with a status; none may crash. Single-threaded.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "fuzz_util.hpp"
#include "src/serve/explorer.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace retra;
  static const std::unique_ptr<serve::Explorer> ex = [] {
    const auto& root = fuzz::databases();
    auto e = serve::Explorer::open({root / "awari", root / "xq", root / "chess"});
    FUZZ_CHECK(e);
    return std::move(*e);
  }();
  const std::string text(reinterpret_cast<const char*>(data), size);
  std::multimap<std::string, std::string> params;
  std::size_t line_end = text.find('\n');
  const std::string path = text.substr(0, line_end);
  while (line_end != std::string::npos) {
    const std::size_t start = line_end + 1;
    line_end = text.find('\n', start);
    const std::string kv =
        text.substr(start, line_end == std::string::npos ? line_end : line_end - start);
    const auto eq = kv.find('=');
    params.emplace(kv.substr(0, eq), eq == std::string::npos ? "" : kv.substr(eq + 1));
  }
  const serve::Response r = ex->get(path, params);
  FUZZ_CHECK(r.status == 200 || r.status == 400 || r.status == 404 || r.status == 500);
  if (r.content_type == "application/json") {
    const auto j = nlohmann::json::parse(r.body, nullptr, false);
    FUZZ_CHECK(!j.is_discarded());
    FUZZ_CHECK(j.contains("ok") && j["ok"].get<bool>() == (r.status == 200));
  }
  return 0;
}
