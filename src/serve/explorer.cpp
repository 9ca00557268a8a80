// The web explorer's request handling: routes, parameter checks and JSON answers (explorer.hpp).
// Thread safety: get() is const and touches only immutable state and Database's locked readers.
#include "src/serve/explorer.hpp"

#include <set>

#include <fmt/format.h>

#include "src/serve/assets.hpp"
#include "src/util/json.hpp"

namespace retra::serve {
namespace {

Response json_response(const nlohmann::json& j, int status = 200) {
  // The same bytes as the CLI's --json (two-space indent, bytes that are not UTF-8 replaced: an
  // error message quotes the request's text), so that answers compare textually too.
  return {status, "application/json", dump_json(j)};
}

int http_status(Errc code) {
  switch (code) {
    case Errc::invalid_argument:
      return 400;
    case Errc::not_found:
    case Errc::mismatch:
      return 404;
    default:
      return 500;
  }
}

// The one value of a parameter; a repeated parameter is ambiguous, so it is an error.
Result<std::string> param(const std::multimap<std::string, std::string>& params,
                          const std::string& key, std::size_t max_bytes) {
  const auto n = params.count(key);
  if (n == 0) return Error(Errc::invalid_argument, fmt::format("missing parameter '{}'", key));
  if (n > 1) return Error(Errc::invalid_argument, fmt::format("parameter '{}' given twice", key));
  const std::string& v = params.find(key)->second;
  if (v.size() > max_bytes)
    return Error(Errc::invalid_argument,
                 fmt::format("parameter '{}' is longer than {} bytes", key, max_bytes));
  return v;
}

}  // namespace

Response error_response(const Error& e) {
  return json_response(error_json(errc_name(e.code()), e.message()), http_status(e.code()));
}

Result<std::unique_ptr<Explorer>> Explorer::open(const std::vector<std::filesystem::path>& dirs) {
  if (dirs.empty())
    return Error(Errc::invalid_argument, "no database to serve: give at least one --db DIR");
  std::unique_ptr<Explorer> ex(new Explorer());
  std::set<std::string> names;
  ex->listing_ = nlohmann::json::array();
  for (const auto& dir : dirs) {
    auto db = Database::open(dir);
    if (!db) return std::move(db).error();
    auto game = module_of(**db);
    if (!game) return std::move(game).error();
    auto stats = (*game)->stats_report(**db, std::nullopt);
    if (!stats) return std::move(stats).error();
    // The directory's last component, unique among the served ones.
    std::string base = std::filesystem::absolute(dir).lexically_normal().filename().string();
    if (base.empty())
      base = std::filesystem::absolute(dir).lexically_normal().parent_path().filename();
    if (base.empty()) base = "db";
    std::string name = base;
    for (int k = 2; names.contains(name); ++k) name = fmt::format("{}-{}", base, k);
    names.insert(name);
    nlohmann::json segments = nlohmann::json::array();
    for (const auto& s : (*db)->manifest().segments) segments.push_back(s.name);
    ex->listing_.push_back({{"name", name},
                            {"game", std::string((*game)->name())},
                            {"summary", std::string((*game)->summary())},
                            {"segments", segments}});
    ex->dbs_.push_back({name, dir, std::move(*db), *game, std::move(stats->json)});
  }
  return ex;
}

const Served* Explorer::find(const std::multimap<std::string, std::string>& params,
                             Response& error) const {
  auto name = param(params, "db", kMaxNameBytes);
  if (!name) {
    error = error_response(name.error());
    return nullptr;
  }
  for (const auto& s : dbs_)
    if (s.name == *name) return &s;
  std::string known;
  for (const auto& s : dbs_) known += (known.empty() ? "" : ", ") + s.name;
  error = error_response(
      Error(Errc::not_found, fmt::format("no database named '{}' is served here; served: {}",
                                         name->substr(0, kMaxNameBytes), known)));
  return nullptr;
}

Response Explorer::get(std::string_view path,
                       const std::multimap<std::string, std::string>& params) const {
  if (path == "/" || path == "/index.html") {
    const Asset* a = find_asset("index.html");
    return {200, std::string(a->type), std::string(a->data)};
  }
  if (path == "/explore") {
    const Asset* a = find_asset("explore.html");
    return {200, std::string(a->type), std::string(a->data)};
  }
  if (path.starts_with("/static/")) {
    // Only names compiled into the binary: nothing from a request ever reaches the file system.
    if (const Asset* a = find_asset(path.substr(8)))
      return {200, std::string(a->type), std::string(a->data)};
  } else if (path == "/api/databases") {
    return json_response({{"ok", true}, {"databases", listing_}});
  } else if (path == "/api/probe") {
    Response err;
    const Served* s = find(params, err);
    if (!s) return err;
    auto position = param(params, "position", kMaxPositionBytes);
    if (!position) return error_response(position.error());
    auto r = s->game->probe_report(*s->db, *position);
    if (!r) return error_response(r.error());
    return json_response(r->json);
  } else if (path == "/api/stats") {
    Response err;
    const Served* s = find(params, err);
    if (!s) return err;
    return json_response(s->stats);
  }
  return error_response(
      Error(Errc::not_found,
            fmt::format("no such page: '{}' (pages: /, /explore; API: /api/databases, /api/probe, "
                        "/api/stats)",
                        path.substr(0, kMaxNameBytes))));
}

}  // namespace retra::serve
