// The Python module `retra` (its compiled part, retra._retra): open a database and probe it, read
// its info and statistics, and build and verify databases, over the same library as the CLI.
// Thread safety: probes release the GIL and may run from many Python threads at once (the probe
// library is thread-safe); build() and verify() release it while they work.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <pybind11/stl/filesystem.h>

#include <chrono>
#include <exception>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "retra/probe.hpp"
#include "src/build/build.hpp"
#include "src/database.hpp"
#include "src/memory_plan.hpp"
#include "src/module/module.hpp"
#include "src/probe/prober_impl.hpp"
#include "src/util/json.hpp"
#include "src/verify/verify.hpp"

namespace py = pybind11;
using namespace retra;

namespace {

// One Python exception class per error class of the library, all under retra.Error.
struct Exceptions {
  py::object base, invalid, not_found, corrupt, io, mismatch, resource, internal;
};
Exceptions* g_exc = nullptr;

[[noreturn]] void raise(const Error& e) {
  py::object cls;
  switch (e.code()) {
    case Errc::invalid_argument:
      cls = g_exc->invalid;
      break;
    case Errc::not_found:
      cls = g_exc->not_found;
      break;
    case Errc::corrupt:
    case Errc::verify_failed:
      cls = g_exc->corrupt;
      break;
    case Errc::io:
      cls = g_exc->io;
      break;
    case Errc::mismatch:
      cls = g_exc->mismatch;
      break;
    case Errc::resource:
      cls = g_exc->resource;
      break;
    case Errc::internal:
      cls = g_exc->internal;
      break;
  }
  // The message may quote what the caller passed, bytes that are not UTF-8 included.
  py::object text = py::reinterpret_steal<py::object>(PyUnicode_DecodeUTF8(
      e.message().data(), static_cast<Py_ssize_t>(e.message().size()), "replace"));
  PyErr_SetObject(cls.ptr(), text.ptr());
  throw py::error_already_set();
}

Error from_status(const probe::Value& v) {
  return Error(probe::detail::errc_of(v.status), v.message);
}

// nlohmann::json -> Python objects, through the json module (exact, and not a hot path).
py::object to_python(const nlohmann::json& j) {
  // Deliberately leaked, like every Python object kept in a static: destroying it after the
  // interpreter has finalized would crash at exit.
  static const auto* loads = new py::object(py::module_::import("json").attr("loads"));
  return (*loads)(dump_json(j, -1));
}

// Runs `work` on its own thread without the GIL while this thread calls progress(label, done,
// total) every 0.1 s; an exception from the callback is raised once the work has finished (a
// build cannot be abandoned half-way: its files would be left for the next run to redo).
template <class F>
auto with_progress(Progress& progress, const py::object& callback, F&& work) {
  using R = decltype(work());
  std::optional<R> result;
  std::exception_ptr failure;
  std::atomic<bool> done{false};
  std::thread t([&] {
    try {
      result.emplace(work());
    } catch (...) {
      failure = std::current_exception();
    }
    done = true;
  });
  std::optional<py::error_already_set> callback_error;
  {
    py::gil_scoped_release release;
    while (!done) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      if (callback.is_none() || callback_error || done) continue;
      py::gil_scoped_acquire acquire;
      const auto s = progress.snapshot();
      try {
        callback(s.label, s.done, s.total);
      } catch (py::error_already_set& e) {
        callback_error.emplace(std::move(e));
      }
    }
    t.join();
  }
  if (failure) std::rethrow_exception(failure);
  if (callback_error) throw *callback_error;
  return std::move(*result);
}

class PyDatabase {
 public:
  explicit PyDatabase(const std::filesystem::path& dir, std::size_t cache_bytes) : dir_(dir) {
    auto db = Database::open(dir);
    if (!db) raise(db.error());
    auto game = module_of(**db);
    if (!game) raise(game.error());
    db_ = std::move(*db);
    game_ = *game;
    probe::Value err;
    prober_ = probe::Prober::open(dir.string(), {cache_bytes}, &err);
    if (!prober_) raise(from_status(err));
  }

  std::string game() const { return std::string(game_->name()); }
  std::string path() const { return dir_.string(); }

  py::object info() const { return to_python(info_json(*db_)); }

  py::object stats() const {
    auto r = game_->stats_report(*db_, std::nullopt);
    if (!r) raise(r.error());
    return to_python(r->json);
  }

  // What `retra probe --json` prints, as a dict (the Python side wraps it in a ProbeResult).
  py::object probe_report(const std::string& position) const {
    Result<Report> r = [&] {
      py::gil_scoped_release release;
      return game_->probe_report(*db_, position);
    }();
    if (!r) raise(r.error());
    return to_python(r->json);
  }

  // Values only, many positions at once (grouped by block), without the GIL.
  py::list probe_many(const std::vector<std::string>& positions, bool strict) const {
    std::vector<std::string_view> views(positions.begin(), positions.end());
    std::vector<probe::Value> out(positions.size());
    {
      py::gil_scoped_release release;
      prober_->probe_batch(views, out);
    }
    py::list values;
    for (std::size_t i = 0; i < out.size(); ++i) {
      if (out[i]) {
        values.append(out[i].value);
      } else if (strict) {
        Error e = from_status(out[i]);
        raise(Error(e.code(), fmt::format("position {} ('{}'): {}", i, positions[i], e.message())));
      } else {
        values.append(py::none());
      }
    }
    return values;
  }

  // The stored bytes of a segment at many indices: the numpy fast path (no text, no GIL).
  py::array_t<std::uint8_t> stored(
      const std::string& segment,
      py::array_t<std::uint64_t, py::array::c_style | py::array::forcecast> indices) const {
    const auto* rec = db_->manifest().find(segment);
    if (!rec)
      raise(Error(Errc::not_found,
                  fmt::format("no segment '{}' in database '{}'", segment, dir_.string())));
    const std::uint64_t entries = rec->entries;
    auto in = indices.unchecked<1>();
    py::array_t<std::uint8_t> out(indices.shape(0));
    auto o = out.mutable_unchecked<1>();
    std::optional<Error> err;
    {
      py::gil_scoped_release release;
      for (py::ssize_t i = 0; i < in.shape(0) && !err; ++i) {
        if (in(i) >= entries) {
          err = Error(Errc::invalid_argument,
                      fmt::format("index {} is outside segment '{}' ({} entries)", in(i), segment,
                                  entries));
          break;
        }
        const probe::Value v = prober_->stored(segment, in(i));
        if (!v)
          err = from_status(v);
        else
          o(i) = static_cast<std::uint8_t>(v.value);
      }
    }
    if (err) raise(*err);
    return out;
  }

  py::dict coverage() const {
    const probe::Coverage c = prober_->coverage();
    py::dict d;
    d["units"] = c.units;
    d["largest"] = c.largest;
    d["complete"] = c.complete;
    d["segments"] = c.segments;
    return d;
  }

 private:
  std::filesystem::path dir_;
  std::unique_ptr<Database> db_;
  const GameModule* game_ = nullptr;
  std::unique_ptr<probe::Prober> prober_;
};

py::list py_build(const std::string& game_name, const std::filesystem::path& db, int threads,
                  bool force, const std::string& kernel, const std::string& memory,
                  const py::object& progress_cb, const py::dict& options) {
  const GameModule* game = find_module(game_name);
  if (!game)
    raise(Error(Errc::invalid_argument,
                fmt::format("unknown game '{}'; known games: {}", game_name, module_names())));
  // Keyword options are the CLI's target options without the dashes: stones="0-10",
  // endgame="KRK,KQvK" (or a list of names).
  OptionValues values;
  for (const auto& [k, v] : options) {
    std::string flag = "--" + py::str(k).cast<std::string>();
    for (char& ch : flag)
      if (ch == '_') ch = '-';
    const OptionSpec* spec = nullptr;
    for (const OptionSpec& s : game->target_options())
      if (s.flag == flag) spec = &s;
    if (!spec) {
      std::string known;
      for (const OptionSpec& s : game->target_options())
        known += (known.empty() ? "" : ", ") + std::string(s.flag.substr(2));
      raise(Error(Errc::invalid_argument,
                  fmt::format("build {}: no option '{}' (options: {})", game_name,
                              py::str(k).cast<std::string>(), known)));
    }
    // A string, a list of them, or a number (stones=16).
    std::vector<std::string> items;
    if (!py::isinstance<py::str>(v) && py::isinstance<py::iterable>(v)) {
      for (auto x : v) items.push_back(py::str(x).cast<std::string>());
    } else {
      items.push_back(py::str(v).cast<std::string>());
    }
    auto& list = values[flag];
    for (const auto& item : items) {
      if (!spec->list) {
        list.push_back(item);
        continue;
      }
      // Split at commas and drop empty items, as the CLI does ("KRK," is KRK).
      std::size_t start = 0;
      while (start <= item.size()) {
        const auto comma = item.find(',', start);
        std::string part = item.substr(start, comma == std::string::npos ? comma : comma - start);
        if (!part.empty()) list.push_back(std::move(part));
        if (comma == std::string::npos) break;
        start = comma + 1;
      }
    }
  }
  auto targets = game->targets(values);
  if (!targets) raise(targets.error());
  BuildRequest req;
  req.game = game_name;
  req.targets = *targets;
  req.db = db;
  const unsigned hw = std::max(1u, std::thread::hardware_concurrency());
  req.threads = threads > 0 ? threads : static_cast<int>(hw);
  req.force = force;
  auto k = parse_kernel(kernel);
  if (!k) raise(k.error());
  req.kernel = *k;
  auto limit = parse_memory_size(memory);
  if (!limit) raise(limit.error());
  req.memory_limit = *limit;
  Progress progress;
  req.progress = &progress;
  auto res = with_progress(progress, progress_cb, [&] { return retra::build(req); });
  if (!res) raise(res.error());
  py::list reports;
  for (const auto& r : *res) reports.append(to_python(game->report_json(r)));
  return reports;
}

py::object py_verify(const std::filesystem::path& dir, int threads, bool full,
                     const py::object& progress_cb) {
  auto db = Database::open(dir);
  if (!db) raise(db.error());
  Progress progress;
  const unsigned hw = std::max(1u, std::thread::hardware_concurrency());
  VerifyOptions opt{threads > 0 ? threads : static_cast<int>(hw), &progress, full};
  auto rep = with_progress(progress, progress_cb, [&] { return retra::verify(**db, opt); });
  if (!rep) raise(rep.error());
  nlohmann::json segs = nlohmann::json::array();
  for (const auto& s : rep->segments)
    segs.push_back(
        {{"name", s.name}, {"positions", s.positions}, {"seconds", s.seconds}, {"check", s.check}});
  nlohmann::json j = {{"ok", rep->ok},
                      {"mode", full ? "full" : "one-pass"},
                      {"segments", segs},
                      {"seconds", rep->seconds}};
  if (rep->failure) {
    const auto& f = *rep->failure;
    j["failure"] = {
        {"segment", f.segment}, {"message", f.message}, {"wrong_positions", f.wrong_positions}};
    if (f.block) j["failure"]["block"] = *f.block;
    if (f.index) j["failure"]["index"] = *f.index;
    if (!f.position.empty()) j["failure"]["position"] = f.position;
    if (f.stored) j["failure"]["stored"] = *f.stored;
    if (f.expected) j["failure"]["expected"] = *f.expected;
  }
  return to_python(j);
}

}  // namespace

PYBIND11_MODULE(_retra, m) {
  m.doc() = "retra's compiled core; use the `retra` package.";
  // Leaked on purpose (see to_python).
  auto& exc = *new Exceptions();
  exc.base = py::reinterpret_borrow<py::object>(
      py::exception<std::runtime_error>(m, "Error", PyExc_RuntimeError).ptr());
  auto sub = [&](const char* name, PyObject* extra) {
    py::tuple bases =
        extra ? py::make_tuple(exc.base, py::handle(extra)) : py::make_tuple(exc.base);
    py::object cls = py::reinterpret_steal<py::object>(PyErr_NewExceptionWithDoc(
        (std::string("retra.") + name).c_str(), nullptr, bases.ptr(), nullptr));
    m.attr(name) = cls;
    return cls;
  };
  exc.invalid = sub("InvalidArgumentError", PyExc_ValueError);
  exc.not_found = sub("NotFoundError", PyExc_LookupError);
  exc.corrupt = sub("CorruptError", nullptr);
  exc.io = sub("IOFailure", PyExc_OSError);
  exc.mismatch = sub("MismatchError", nullptr);
  exc.resource = sub("ResourceError", PyExc_MemoryError);
  exc.internal = sub("InternalError", nullptr);
  g_exc = &exc;

  py::class_<PyDatabase>(m, "_Database")
      .def(py::init<const std::filesystem::path&, std::size_t>(), py::arg("path"),
           py::arg("cache_bytes"))
      .def_property_readonly("game", &PyDatabase::game)
      .def_property_readonly("path", &PyDatabase::path)
      .def("info", &PyDatabase::info)
      .def("stats", &PyDatabase::stats)
      .def("probe_report", &PyDatabase::probe_report, py::arg("position"))
      .def("probe_many", &PyDatabase::probe_many, py::arg("positions"), py::arg("strict"))
      .def("stored", &PyDatabase::stored, py::arg("segment"), py::arg("indices"))
      .def("coverage", &PyDatabase::coverage);
  m.def("_build", &py_build, py::arg("game"), py::arg("db"), py::arg("threads"), py::arg("force"),
        py::arg("kernel"), py::arg("memory"), py::arg("progress"), py::arg("options"));
  m.def("_verify", &py_verify, py::arg("db"), py::arg("threads"), py::arg("full"),
        py::arg("progress"));
  m.def(
      "games",
      [] {
        py::list l;
        for (const GameModule* g : modules()) l.append(std::string(g->name()));
        return l;
      },
      "The games this retra can build and probe.");
}
