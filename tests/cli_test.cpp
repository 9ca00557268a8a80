// The `retra` command line, run as a subprocess: the main workflow with and without --json, and
// every bad input the foundation issue lists: clear message, documented exit code, no crash
// (this suite also runs under ASan + UBSan).
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <thread>

#include "src/database.hpp"
#include "src/format/segment.hpp"
#include "src/io/file.hpp"
#include "test_util.hpp"

extern char** environ;

namespace retra {
namespace {

struct Outcome {
  int exit = -1;
  std::string out, err;
};

// Runs `program args...` (killed with SIGKILL after kill_after, when given); retra() runs the
// retra binary.
Outcome run(std::string program, std::vector<std::string> args,
            std::chrono::milliseconds kill_after = {}) {
  test::TempDir tmp;
  const std::string out = (tmp / "out").string(), err = (tmp / "err").string();
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&fa, 2, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  std::vector<char*> argv = {program.data()};
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid;
  Outcome r;
  if (posix_spawn(&pid, program.c_str(), &fa, nullptr, argv.data(), environ) != 0) return r;
  posix_spawn_file_actions_destroy(&fa);
  int status = 0;
  bool reaped = false;
  const auto deadline = std::chrono::steady_clock::now() + kill_after;
  while (kill_after.count() > 0 && !(reaped = waitpid(pid, &status, WNOHANG) == pid)) {
    if (std::chrono::steady_clock::now() >= deadline) {
      kill(pid, SIGKILL);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  if (!reaped) waitpid(pid, &status, 0);
  r.exit = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.out = io::read_file(out).value();
  r.err = io::read_file(err).value();
  return r;
}

Outcome retra(std::vector<std::string> args, std::chrono::milliseconds kill_after = {}) {
  return run(RETRA_BINARY, std::move(args), kill_after);
}

void expect_failure(const Outcome& r, int code, std::string_view fragment) {
  EXPECT_EQ(r.exit, code) << "stdout: " << r.out << "\nstderr: " << r.err;
  EXPECT_NE(r.err.find(fragment), std::string::npos) << "stderr: " << r.err;
  EXPECT_EQ(r.err.find("AddressSanitizer"), std::string::npos);
  EXPECT_EQ(r.err.find("runtime error"), std::string::npos);
}

class Cli : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new test::TempDir();
    const Outcome r = retra({"build", "awari", "--stones", "0-6", "--db", db(), "--threads", "2"});
    ASSERT_EQ(r.exit, 0) << r.err;
  }
  static void TearDownTestSuite() { delete dir_; }
  static std::string db() { return (dir_->path() / "db").string(); }
  static test::TempDir* dir_;
};
test::TempDir* Cli::dir_ = nullptr;

TEST_F(Cli, BuildReportsEveryStoneCount) {
  const Outcome r = retra({"build", "awari", "--stones", "3-6", "--db", db(), "--json"});
  ASSERT_EQ(r.exit, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["segments"].size(), 4u);
  EXPECT_EQ(j["segments"][3]["stones"], 6);
  EXPECT_EQ(j["segments"][3]["positions"], 12376);
  EXPECT_TRUE(j["segments"][3]["skipped"]);
  EXPECT_GT(j["peak_rss_bytes"].get<std::uint64_t>(), 0u);
  const Outcome h = retra({"build", "awari", "--stones", "6", "--db", db()});
  ASSERT_EQ(h.exit, 0);
  EXPECT_NE(h.out.find("already built"), std::string::npos);
  EXPECT_NE(h.out.find("pos*iter/s"), std::string::npos);
}

TEST_F(Cli, BothKernelsCanBeChosen) {
  for (const char* k : {"forward", "backward"}) {
    const Outcome r = retra(
        {"build", "awari", "--stones", "5", "--force", "--kernel", k, "--db", db(), "--json"});
    ASSERT_EQ(r.exit, 0) << r.err;
    EXPECT_EQ(nlohmann::json::parse(r.out)["segments"][0]["kernel"], k);
  }
  expect_failure(retra({"build", "awari", "--stones", "5", "--kernel", "sideways", "--db", db()}),
                 2, "--kernel");
}

TEST_F(Cli, SolveBeyondTheLeavesMatchesTheProbe) {
  const std::string pos = "0,1,0,0,0,3,1,0,0,0,1,0";  // 6 stones, searched down to 4
  const Outcome p = retra({"probe", "--db", db(), "--json", pos});
  ASSERT_EQ(p.exit, 0) << p.err;
  for (const char* alg : {"pn", "df-pn", "ef-pn2"}) {
    const Outcome s =
        retra({"solve", "--db", db(), "--json", "--leaf-max", "4", "--algorithm", alg, pos});
    ASSERT_EQ(s.exit, 0) << s.err;
    const auto j = nlohmann::json::parse(s.out);
    EXPECT_EQ(j["database_stones"], 4);
    ASSERT_TRUE(j["solved"].get<bool>()) << alg;
    EXPECT_EQ(j["value"], nlohmann::json::parse(p.out)["value"]) << alg;
    EXPECT_GT(j["stats"]["expanded"].get<int>(), 0);
  }
  expect_failure(retra({"solve", "--db", db(), "--algorithm", "minimax", pos}), 2,
                 "unknown algorithm");
  expect_failure(retra({"solve", "--db", db(), "1,1"}), 2, "12");
  expect_failure(retra({"solve", "--db", db(), "--max-memory", "lots", pos}), 2, "--max-memory");
  const Outcome m =
      retra({"solve", "--db", db(), "--json", "--leaf-max", "4", "--max-memory", "64K", pos});
  ASSERT_EQ(m.exit, 0) << m.err;
  const auto mj = nlohmann::json::parse(m.out);
  EXPECT_LE(
      mj["stats"]["largest"].get<std::uint64_t>() * mj["stats"]["node_bytes"].get<std::uint64_t>(),
      (64u << 10) + 6 * mj["stats"]["node_bytes"].get<std::uint64_t>())
      << "the tree stays within the memory limit (plus one expansion)";
}

TEST_F(Cli, ProbeHumanAndJson) {
  const Outcome r = retra({"probe", "--db", db(), "0,0,0,0,0,1,0,1,0,0,0,0"});
  ASSERT_EQ(r.exit, 0) << r.err;
  EXPECT_NE(r.out.find("value"), std::string::npos);
  const Outcome j = retra({"probe", "--db", db(), "--json", "0 0 0 0 0 1 0 1 0 0 0 0"});
  ASSERT_EQ(j.exit, 0) << j.err;
  const auto p = nlohmann::json::parse(j.out);
  EXPECT_EQ(p["stones"], 2);
  ASSERT_EQ(p["moves"].size(), 6u);
  EXPECT_EQ(p["moves"][0]["kind"], "empty");
  EXPECT_EQ(p["moves"][5]["kind"], "quiet");
  EXPECT_EQ(p["best"], nlohmann::json::array({5}));
  EXPECT_EQ(p["value"], p["moves"][5]["value"]);
}

TEST_F(Cli, VerifyStatsInfoAndPlot) {
  const Outcome v = retra({"verify", "--db", db(), "--json"});
  ASSERT_EQ(v.exit, 0) << v.err;
  EXPECT_TRUE(nlohmann::json::parse(v.out)["ok"]);
  EXPECT_EQ(nlohmann::json::parse(v.out)["mode"], "one-pass");
  // --full: every score segment also recomputed by the kernel its build did not use.
  const Outcome full = retra({"verify", "--db", db(), "--json", "--full"});
  ASSERT_EQ(full.exit, 0) << full.err;
  const auto fj = nlohmann::json::parse(full.out);
  EXPECT_TRUE(fj["ok"]);
  EXPECT_EQ(fj["mode"], "full");
  ASSERT_EQ(fj["segments"].size(), 7u);
  for (const auto& seg : fj["segments"]) EXPECT_EQ(seg["check"], "one-pass+forward") << seg;
  const Outcome text = retra({"verify", "--db", db(), "--full"});
  EXPECT_NE(text.out.find("full: score values recomputed by the other kernel"), std::string::npos)
      << text.out;
  const Outcome s =
      retra({"stats", "--db", db(), "--json", "--plot", (dir_->path() / "f.svg").string()});
  ASSERT_EQ(s.exit, 0) << s.err;
  const auto st = nlohmann::json::parse(s.out);
  EXPECT_EQ(st["segments"][4]["histogram"]["-4"], 532);
  EXPECT_EQ(st["segments"][4]["histogram"]["4"], 415);
  const std::string svg = io::read_file(dir_->path() / "f.svg").value();
  EXPECT_NE(svg.find("<svg"), std::string::npos);
  EXPECT_NE(svg.find("6 stones"), std::string::npos);
  const Outcome i = retra({"info", "--db", db(), "--json"});
  ASSERT_EQ(i.exit, 0) << i.err;
  const auto in = nlohmann::json::parse(i.out);
  EXPECT_EQ(in["game"], "awari");
  EXPECT_EQ(in["segments"].size(), 7u);
  const Outcome ih = retra({"info", "--db", db()});
  EXPECT_NE(ih.out.find("awari-colex-v1"), std::string::npos);
  EXPECT_NE(ih.out.find("codec"), std::string::npos) << ih.out;
  EXPECT_NE(ih.out.find("index"), std::string::npos) << "Awari's index has no digits: " << ih.out;
}

TEST_F(Cli, MalformedPositions) {
  expect_failure(retra({"probe", "--db", db(), "1,1,1"}), 2, "3 pits given, 12 needed");
  expect_failure(retra({"probe", "--db", db(), "1,1,1,1,1,1,1,1,1,1,1,-1"}), 2, "negative");
  expect_failure(retra({"probe", "--db", db(), "a,b,c,d,e,f,g,h,i,j,k,l"}), 2, "not a number");
  expect_failure(retra({"probe", "--db", db(), "9,9,9,9,9,9,0,0,0,0,0,0"}), 2,
                 "54 stones in total");
  const Outcome j = retra({"probe", "--db", db(), "--json", "1,1"});
  EXPECT_EQ(j.exit, 2);
  EXPECT_EQ(nlohmann::json::parse(j.out)["error"]["code"], "invalid_argument");
}

TEST_F(Cli, PositionOutsideTheBuiltSegments) {
  expect_failure(retra({"probe", "--db", db(), "1,1,1,1,1,2,4,2,3,0,0,0"}), 3,
                 "has no awari segment '16'");
}

TEST_F(Cli, MissingAndForeignDatabaseDirectories) {
  expect_failure(
      retra({"probe", "--db", (dir_->path() / "none").string(), "1,0,0,0,0,0,0,0,0,0,0,0"}), 3,
      "does not exist");
  const auto foreign = dir_->path() / "foreign";
  std::filesystem::create_directories(foreign);
  std::ofstream(foreign / "manifest.json") << R"({"some": "other tool"})";
  expect_failure(retra({"verify", "--db", foreign.string()}), 3, "not a retra database manifest");
  const auto plain = dir_->path() / "plain";
  std::filesystem::create_directories(plain);
  std::ofstream(plain / "x.txt") << "x";
  expect_failure(retra({"stats", "--db", plain.string()}), 3, "is not a retra database");
  expect_failure(retra({"build", "awari", "--stones", "0-2", "--db", plain.string()}), 3,
                 "not empty and holds no retra database");
}

// A database whose manifest names another value encoding (an older version's bytes) is refused
// by every command that reads values, rather than read with the wrong meaning.
TEST(CliIdentity, AnotherValueEncodingIsRefused) {
  test::TempDir dir;
  const std::string db = (dir / "db").string();
  ASSERT_EQ(retra({"build", "awari", "--stones", "0-2", "--db", db}).exit, 0);
  const auto manifest = dir / "db" / "manifest.json";
  auto j = nlohmann::json::parse(io::read_file(manifest).value());
  j["value_encoding"] = "score-i16";
  std::ofstream(manifest) << format::seal_manifest(j);  // as an older retra would have sealed it
  for (const char* cmd : {"verify", "stats"})
    expect_failure(retra({cmd, "--db", db}), 3, "rebuild it with this version");
  expect_failure(retra({"probe", "--db", db, "1,0,0,0,0,0,0,0,0,0,0,0"}), 3, "written as (");
}

// A database holds what was asked for: tables with DTM beside tables without, or what a stopped
// build finished. verify checks all of that and needs only the segments those depend on.
TEST(CliVerify, APartialOrMixedDatabaseIsVerifiedForWhatItHolds) {
  test::TempDir dir;
  const std::string db = (dir / "db").string();
  ASSERT_EQ(retra({"build", "chess", "--endgame", "KRvK", "--db", db}).exit, 0);
  ASSERT_EQ(
      retra({"build", "chess", "--endgame", "KRvKN", "--metrics", "wdl,dtz", "--db", db}).exit, 0);
  const auto ok = retra({"verify", "--db", db});
  EXPECT_EQ(ok.exit, 0) << ok.out << ok.err;
  EXPECT_NE(ok.out.find("verified 4 segments"), std::string::npos) << ok.out;
  // Without a table that a held one captures into, it fails and names both.
  const auto manifest = dir / "db" / "manifest.json";
  auto j = nlohmann::json::parse(io::read_file(manifest).value());
  auto& segs = j["segments"];
  for (auto it = segs.begin(); it != segs.end(); ++it)
    if ((*it)["name"] == "KNvK") {
      segs.erase(it);
      break;
    }
  std::ofstream(manifest) << format::seal_manifest(j);
  const auto bad = retra({"verify", "--db", db});
  EXPECT_EQ(bad.exit, 1);
  EXPECT_NE((bad.out + bad.err).find("KNvK is needed by KRvKN but is not in the database"),
            std::string::npos)
      << bad.out << bad.err;
}

// `verify --segments` checks what it selects (a name, a table's segments, a glob) and only reads
// the segments those need; a pattern that selects nothing is an error that says where to look.
TEST(CliVerify, SelectedSegmentsAreCheckedTheirSupportsOnlyRead) {
  test::TempDir dir;
  const std::string db = (dir / "db").string();
  // KPvK (a segment per rank of the leading pawn) and the four tables its promotions lead to:
  // a table with supports that builds in a second even under ASan.
  ASSERT_EQ(retra({"build", "chess", "--endgame", "KPvK", "--db", db}).exit, 0);
  auto checked = [](const nlohmann::json& j) {
    std::vector<std::string> names;
    for (const auto& s : j["segments"]) names.push_back(s["segment"]);
    std::sort(names.begin(), names.end());
    return names;
  };
  const auto table = retra({"verify", "--db", db, "--segments", "KPvK", "--json"});
  ASSERT_EQ(table.exit, 0) << table.out << table.err;
  const auto tj = nlohmann::json::parse(table.out);
  std::vector<std::string> kpk;
  for (int rank = 2; rank <= 7; ++rank) {
    kpk.push_back("KPvK_w" + std::to_string(rank));
    kpk.push_back("KPvK_w" + std::to_string(rank) + ".dtm");
  }
  std::sort(kpk.begin(), kpk.end());
  EXPECT_EQ(checked(tj), kpk);
  const auto unchecked = tj["unchecked"].get<std::vector<std::string>>();
  for (const char* support : {"KQvK", "KRvK", "KBvK", "KNvK", "KQvK.dtm", "KNvK.dtm"})
    EXPECT_NE(std::find(unchecked.begin(), unchecked.end(), support), unchecked.end())
        << support << " " << tj.dump();
  const auto glob = retra({"verify", "--db", db, "--segments", "KRvK*,KNvK.dtm", "--json"});
  ASSERT_EQ(glob.exit, 0) << glob.out << glob.err;
  const auto gj = nlohmann::json::parse(glob.out);
  EXPECT_EQ(checked(gj), (std::vector<std::string>{"KNvK.dtm", "KRvK", "KRvK.dtm"}));
  const auto text = retra({"verify", "--db", db, "--segments", "KPvK_w7.dtm"});
  EXPECT_EQ(text.exit, 0) << text.out << text.err;
  EXPECT_NE(text.out.find("verified 1 segments"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("supporting segments read, not checked"), std::string::npos) << text.out;
  const auto none = retra({"verify", "--db", db, "--segments", "KPvK,KRvKN"});
  EXPECT_EQ(none.exit, 3) << none.out << none.err;
  EXPECT_NE(none.err.find("no segment of"), std::string::npos) << none.err;
  EXPECT_NE(none.err.find("matches 'KRvKN'"), std::string::npos) << none.err;
}

TEST_F(Cli, BadCommandLines) {
  expect_failure(retra({"build", "go", "--db", db()}), 2,
                 "unknown game 'go'; known games: awari, xiangqi, chess");
  expect_failure(retra({"build", "awari", "--stones", "0-49", "--db", db()}), 2,
                 "0 <= A <= B <= 48");
  expect_failure(retra({"build", "awari", "--stones", "5-3", "--db", db()}), 2, "--stones '5-3'");
  expect_failure(retra({"build", "awari", "--stones", "x", "--db", db()}), 2, "--stones 'x'");
  expect_failure(retra({"build", "awari", "--db", db()}), 2, "--stones is required");
  expect_failure(retra({"build", "awari", "--stones", "1", "--db", db(), "--threads", "0"}), 2,
                 "--threads");
  expect_failure(retra({"verify"}), 2, "--db is required");
  expect_failure(retra({"build", "awari", "--stones", "0-30", "--db",
                        (dir_->path() / "big").string(), "--memory", "64M"}),
                 6, "more than the memory limit");
  EXPECT_FALSE(std::filesystem::exists(dir_->path() / "big"));
  // Under the default limit (80% of RAM, less under ulimit or a cgroup) the 48-stone segment
  // would run out of core, and its files (3.9 TB) fit no disk here: refused before anything is
  // written, with the numbers.
  expect_failure(
      retra({"build", "awari", "--stones", "0-48", "--db", (dir_->path() / "big").string()}), 6,
      "out of core needs");
  EXPECT_FALSE(std::filesystem::exists(dir_->path() / "big"));
  expect_failure(retra({"build", "awari", "--stones", "0-3", "--db", db(), "--memory", "lots"}), 2,
                 "--memory 'lots'");
  expect_failure(retra({"build", "awari", "--stones", "0-3", "--db", db(), "--disk", "50%"}), 2,
                 "--disk '50%': expected a size like 12G, 512M (a percentage");
  expect_failure(retra({"build", "awari", "--stones", "0-3", "--db", db(), "--disk", "lots"}), 2,
                 "--disk 'lots'");
  // Out of core, the files need more than --disk allows: refused with both numbers.
  expect_failure(retra({"build", "awari", "--stones", "0-3", "--db",
                        (dir_->path() / "small").string(), "--out-of-core", "--disk", "1M"}),
                 6, "and --disk allows 1.0 MiB");
  EXPECT_FALSE(std::filesystem::exists(dir_->path() / "small" / "manifest.json"));
  expect_failure(
      retra({"build", "awari", "--stones", "0-3", "--db", db(), "--checkpoint-every", "-1"}), 2,
      "--checkpoint-every: '-1' is not a number of seconds >= 0");
  expect_failure(
      retra({"build", "awari", "--stones", "0-3", "--db", db(), "--partitions", "99999999"}), 2,
      "--partitions");
  expect_failure(retra({"frobnicate"}), 2, "retra --help");
  expect_failure(retra({}), 2, "subcommand");
  EXPECT_EQ(retra({"--help"}).exit, 0);
  EXPECT_EQ(retra({"--version"}).exit, 0);
  const Outcome g = retra({"games", "--json"});
  EXPECT_EQ(nlohmann::json::parse(g.out)["games"][0]["name"], "awari");
}

// Xiangqi through the command line: a small hierarchy built once, then every bad input the
// xiangqi issue lists (malformed FEN, unknown letters, impossible material, a position outside
// the built endgames).
class XiangqiCli : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new test::TempDir();
    const Outcome r = retra({"build", "xiangqi", "--endgame", "KRK,KCK", "--db", db(), "--threads",
                             "2", "--no-progress", "--json"});
    ASSERT_EQ(r.exit, 0) << r.err;
    const auto j = nlohmann::json::parse(r.out);
    ASSERT_EQ(j["endgames"].size(), 2u);
    EXPECT_EQ(j["endgames"][0]["stats"]["valid_positions"], 3600);
    EXPECT_GT(j["endgames"][0]["rss_bytes"].get<std::uint64_t>(), 0u);
  }
  static void TearDownTestSuite() { delete dir_; }
  static std::string db() { return (dir_->path() / "db").string(); }
  static test::TempDir* dir_;
};
test::TempDir* XiangqiCli::dir_ = nullptr;

TEST_F(XiangqiCli, ProbeVerifyStatsAndTheBuildTable) {
  const Outcome p = retra({"probe", "--db", db(), "--json", "3k5/9/9/9/9/9/9/9/4R4/4K4 w"});
  ASSERT_EQ(p.exit, 0) << p.err;
  const auto j = nlohmann::json::parse(p.out);
  EXPECT_EQ(j["endgame"], "KRK");
  EXPECT_EQ(j["value"].get<int>() % 2, 1) << "KRK is won for Red to move here";
  ASSERT_FALSE(j["moves"].empty());
  ASSERT_FALSE(j["best"].empty());
  const Outcome v = retra({"verify", "--db", db(), "--json", "--no-progress"});
  ASSERT_EQ(v.exit, 0) << v.err;
  EXPECT_TRUE(nlohmann::json::parse(v.out)["ok"]);
  const Outcome s = retra({"stats", "--db", db(), "--json"});
  ASSERT_EQ(s.exit, 0) << s.err;
  const auto st = nlohmann::json::parse(s.out);
  EXPECT_EQ(st["endgames"]["KRK"]["max_dtm_plies"], 4);
  EXPECT_EQ(st["endgames"]["KCK"]["draws"][0], 2484);
  const Outcome again = retra({"build", "xiangqi", "--endgame", "KRK", "--db", db()});
  ASSERT_EQ(again.exit, 0) << again.err;
  EXPECT_NE(again.out.find("already built"), std::string::npos);
  EXPECT_NE(again.out.find("RSS"), std::string::npos);
}

TEST_F(XiangqiCli, SolveFindsTheMateAndRejectsBadGoals) {
  // KRK searched without its database (leaves up to 2 pieces: armless, a draw): the rook mates.
  const char* fen = "3k5/9/9/9/9/9/9/9/4R4/4K4 w";
  const Outcome s = retra({"solve", "--db", db(), "--json", "--leaf-max", "2", fen});
  ASSERT_EQ(s.exit, 0) << s.err;
  const auto j = nlohmann::json::parse(s.out);
  EXPECT_EQ(j["endgame"], "KRK");
  ASSERT_TRUE(j["solved"].get<bool>());
  EXPECT_EQ(j["result"], "win");
  EXPECT_EQ(j["value"], 1);
  const Outcome t = retra({"solve", "--db", db(), "--threshold", "1", "--algorithm", "df-pn", fen});
  ASSERT_EQ(t.exit, 0) << t.err;
  EXPECT_NE(t.out.find("the side to move wins: proven"), std::string::npos) << t.out;
  expect_failure(retra({"solve", "--db", db(), "--threshold", "5", fen}), 2, "xiangqi goals");
  expect_failure(retra({"solve", "--db", db(), "3k5/9/9 w"}), 2, "fewer than 10 complete ranks");
}

TEST_F(XiangqiCli, MalformedFenAndUnknownLetters) {
  expect_failure(retra({"probe", "--db", db(), "3k5/9/9 w"}), 2, "fewer than 10 complete ranks");
  expect_failure(retra({"probe", "--db", db(), "3k5/9/9/9/9/9/9/9/4Q4/4K4 w"}), 2,
                 "unknown piece letter 'Q'");
  expect_failure(retra({"probe", "--db", db(), "3k5/9/9/9/9/9/9/9/4R4/4K4 x"}), 2,
                 "side to move 'x'");
  expect_failure(retra({"probe", "--db", db(), "3k5/9/9/9/9/9/9/9/4R4/4K4"}), 2,
                 "side to move is missing");
  expect_failure(retra({"probe", "--db", db(), "3k5/9/9/9/9/9/9/9/4R4/4K5 w"}), 2,
                 "more than 9 files");
  const Outcome j = retra({"probe", "--db", db(), "--json", "xyz"});
  EXPECT_EQ(j.exit, 2);
  EXPECT_EQ(nlohmann::json::parse(j.out)["error"]["code"], "invalid_argument");
}

TEST_F(XiangqiCli, ImpossibleMaterial) {
  // A king outside its palace, two kings of one colour, a third rook, a guard off its points.
  expect_failure(retra({"probe", "--db", db(), "3k5/9/9/9/9/9/9/9/4R4/K8 w"}), 2,
                 "cannot stand on a0");
  expect_failure(retra({"probe", "--db", db(), "3k5/9/9/9/9/9/9/9/3KR4/4K4 w"}), 2,
                 "red has 2 kings");
  expect_failure(retra({"probe", "--db", db(), "3k5/9/9/9/9/9/9/R8/4R4/R3K4 w"}), 2,
                 "3 pieces of type R");
  expect_failure(retra({"probe", "--db", db(), "3k5/9/9/9/9/9/9/9/4R4/G3K4 w"}), 2,
                 "cannot stand on a0");
  expect_failure(retra({"build", "xiangqi", "--endgame", "KQK", "--db", db()}), 2,
                 "unknown piece letter 'Q'");
  expect_failure(retra({"build", "xiangqi", "--endgame", "KK", "--db", db()}), 2,
                 "nothing to build");
  expect_failure(retra({"build", "xiangqi", "--endgame", "KRRRK", "--db", db()}), 2,
                 "more than 2 of 'R'");
  expect_failure(retra({"build", "xiangqi", "--endgame", "RKK", "--db", db()}), 2,
                 "must start with K");
  expect_failure(retra({"build", "xiangqi", "--set", "fang152", "--db", db()}), 2,
                 "the known set is fang151");
  expect_failure(retra({"build", "xiangqi", "--db", db()}), 2, "name the endgames");
}

TEST_F(XiangqiCli, PositionOutsideTheBuiltEndgames) {
  expect_failure(retra({"probe", "--db", db(), "3k5/9/9/9/9/9/9/9/4N4/4K4 w"}), 3,
                 "endgame KNK is not in database");
}

// Chess through the command line: the 3-piece tables built once (the spec's command shapes and
// JSON fields), then every bad input the chess issue lists: castling rights, bad en-passant
// squares, too many pieces, pawns on rank 1 or 8, the side not to move in check, a table not built.
class ChessCli : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new test::TempDir();
    const Outcome r = retra({"build", "chess", "--pieces", "3", "--db", db(), "--threads", "2",
                             "--no-progress", "--json"});
    ASSERT_EQ(r.exit, 0) << r.err;
    const auto j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["tables"], 5);  // KQvK KRvK KBvK KNvK KPvK
    // Each pawnless table is one segment; KPvK one per rank of the pawn; every one with its DTM.
    EXPECT_EQ(j["segments"].size(), 2u * (4 + 6));
    std::uint64_t positions = 0;
    for (const auto& s : j["segments"]) {
      positions += s["positions"].get<std::uint64_t>();
      EXPECT_GT(s["file_bytes"].get<std::uint64_t>(), 0u);
      EXPECT_GE(s["bits_per_position"].get<double>(), 0.0);
    }
    EXPECT_EQ(j["positions"], positions);
  }
  static void TearDownTestSuite() { delete dir_; }
  static std::string db() { return (dir_->path() / "db").string(); }
  static test::TempDir* dir_;
};
test::TempDir* ChessCli::dir_ = nullptr;

TEST_F(ChessCli, ProbeGivesEveryMoveAndTheBestUnderTheCounter) {
  const char* fen = "8/8/8/3k4/8/8/8/KQ6 w - - 0 1";
  const Outcome p = retra({"probe", "--db", db(), "--json", fen});
  ASSERT_EQ(p.exit, 0) << p.err;
  const auto j = nlohmann::json::parse(p.out);
  EXPECT_EQ(j["endgame"], "KQvK");
  EXPECT_EQ(j["wdl"], "win");
  const int dtz = j["dtz"], dtm = j["dtm"];
  EXPECT_GT(dtz, 0);
  EXPECT_EQ(dtm, dtz) << "KQvK: every zeroing move is the mate";
  EXPECT_EQ(dtm % 2, 1);
  ASSERT_EQ(j["moves"].size(), 22u);  // 2 king moves, 20 queen moves
  int best = 1000;
  for (const auto& m : j["moves"]) {
    ASSERT_TRUE(m.contains("uci") && m.contains("wdl") && m.contains("dtz") && m.contains("dtm"));
    EXPECT_EQ(m["uci"].get<std::string>().size(), 4u);
    if (m["wdl"] == "win") best = std::min(best, m["dtz"].get<int>());
    if (m["wdl"] == "draw") {
      EXPECT_TRUE(m["dtm"].is_null()) << m;
    }
  }
  EXPECT_EQ(best, dtz) << "the root's DTZ is its best move's";
  EXPECT_EQ(j["best"], "a1b2");
  // The same position with 95 plies on the counter: still won in the tables, drawn in the game.
  const Outcome late = retra({"probe", "--db", db(), "--json", "8/8/8/3k4/8/8/8/KQ6 w - - 95 80"});
  ASSERT_EQ(late.exit, 0) << late.err;
  const auto l = nlohmann::json::parse(late.out);
  EXPECT_EQ(l["wdl"], "win");
  EXPECT_EQ(l["outcome"], "draw");
  EXPECT_EQ(l["halfmove_clock"], 95);
  // Black to move in KPvK, pieces given in either colouring: the pawn side wins from its side.
  const Outcome b = retra({"probe", "--db", db(), "--json", "8/8/8/8/4k3/8/4p3/4K3 w - - 0 1"});
  ASSERT_EQ(b.exit, 0) << b.err;
  EXPECT_EQ(nlohmann::json::parse(b.out)["endgame"], "KPvK");
}

TEST_F(ChessCli, StatsVerifyInfoAndSolve) {
  const Outcome s = retra({"stats", "--db", db(), "--json"});
  ASSERT_EQ(s.exit, 0) << s.err;
  const auto e = nlohmann::json::parse(s.out)["endgames"];
  ASSERT_EQ(e.size(), 5u);
  EXPECT_EQ(e["KQvK"]["white"]["longest_dtm"]["plies"], 19);  // the spec's public facts
  EXPECT_EQ(e["KRvK"]["white"]["longest_dtm"]["plies"], 31);
  for (const char* side : {"white", "black"}) {
    const auto& t = e["KPvK"][side];
    std::uint64_t classes = 0, dtz = 0;
    for (const auto& [k, n] : t["wdl"].items()) classes += n.get<std::uint64_t>();
    for (const auto& [k, n] : t["dtz"].items()) dtz += n.get<std::uint64_t>();
    EXPECT_EQ(classes, t["legal_positions"].get<std::uint64_t>()) << side;
    EXPECT_EQ(dtz, classes) << side;
    EXPECT_TRUE(t.contains("dtm") && t.contains("longest_dtz") && t.contains("longest_dtm"));
  }
  EXPECT_EQ(e["KBvK"]["white"]["wdl"]["win"], 0);
  const Outcome v = retra({"verify", "--db", db(), "--json", "--no-progress"});
  ASSERT_EQ(v.exit, 0) << v.err;
  EXPECT_TRUE(nlohmann::json::parse(v.out)["ok"]);
  const Outcome i = retra({"info", "--db", db(), "--json"});
  ASSERT_EQ(i.exit, 0) << i.err;
  EXPECT_EQ(nlohmann::json::parse(i.out)["value_encoding"], "dtz50-dtm1-u8");
  // A 4-piece position beyond the tables, searched down to 3-piece leaves.
  const Outcome solve = retra({"solve", "--db", db(), "--json", "8/8/8/8/8/3k4/8/KRR5 w - - 0 1"});
  ASSERT_EQ(solve.exit, 0) << solve.err;
  const auto so = nlohmann::json::parse(solve.out);
  EXPECT_EQ(so["endgame"], "KRRvK");
  EXPECT_TRUE(so["solved"].get<bool>());
  EXPECT_EQ(so["result"], "win");
  EXPECT_GT(so["stats"]["exact_leaves"].get<std::uint64_t>(), 0u);
}

// `build --plan`: the plan of what is still to build, nothing written, exit 6 when a segment
// cannot fit the limit or its out-of-core files the disk.
TEST_F(ChessCli, PlanBuildsNothing) {
  const auto fresh = (dir_->path() / "plan").string();
  const Outcome p =
      retra({"build", "chess", "--endgame", "KQvKR", "--plan", "--json", "--db", fresh});
  ASSERT_EQ(p.exit, 0) << p.err;
  const auto j = nlohmann::json::parse(p.out)["plan"];
  std::set<std::string> names;
  for (const auto& s : j["segments"]) {
    names.insert(s["segment"]);
    EXPECT_TRUE(s["fits"].get<bool>());
    EXPECT_GE(s["bytes"].get<std::uint64_t>(), s["kernel_bytes"].get<std::uint64_t>());
  }
  for (const char* want : {"KQvKR", "KQvKR.dtm", "KQvK", "KRvK", "KQvK.dtm"})
    EXPECT_TRUE(names.count(want)) << want;
  EXPECT_FALSE(std::filesystem::exists(fresh));
  // Built segments are not planned again.
  const Outcome built =
      retra({"build", "chess", "--pieces", "3", "--plan", "--json", "--db", db()});
  ASSERT_EQ(built.exit, 0) << built.err;
  EXPECT_TRUE(nlohmann::json::parse(built.out)["plan"]["segments"].empty());
  const Outcome small =
      retra({"build", "chess", "--endgame", "KQvKR", "--plan", "--memory", "1M", "--db", fresh});
  EXPECT_EQ(small.exit, 6) << small.out << small.err;
  EXPECT_NE(small.out.find("does not fit"), std::string::npos) << small.out;
  // Out of core by request: every segment, with the disk its files take.
  const Outcome ooc = retra(
      {"build", "chess", "--endgame", "KQvKR", "--plan", "--out-of-core", "--json", "--db", fresh});
  ASSERT_EQ(ooc.exit, 0) << ooc.err;
  const auto o = nlohmann::json::parse(ooc.out)["plan"];
  EXPECT_GT(o["disk_bytes"].get<std::uint64_t>(), 0u);
  for (const auto& s : o["segments"]) {
    EXPECT_TRUE(s["out_of_core"].get<bool>()) << s;
    EXPECT_GT(s["disk_bytes"].get<std::uint64_t>(), 0u) << s;
  }
  EXPECT_GT(o["disk_free_bytes"].get<std::uint64_t>(), 0u);
  EXPECT_EQ(o["disk_limit_bytes"].get<std::uint64_t>(), 0u);
  EXPECT_TRUE(o["disk_fits"].get<bool>());
  // --disk below the files' need: the plan says so, and exits 6.
  const Outcome tight = retra({"build", "chess", "--endgame", "KQvKR", "--plan", "--out-of-core",
                               "--disk", "1M", "--json", "--db", fresh});
  EXPECT_EQ(tight.exit, 6) << tight.out << tight.err;
  const auto t = nlohmann::json::parse(tight.out);
  EXPECT_FALSE(t["ok"].get<bool>());
  EXPECT_FALSE(t["plan"]["disk_fits"].get<bool>());
  EXPECT_EQ(t["plan"]["disk_limit_bytes"].get<std::uint64_t>(), 1u << 20);
  const Outcome tight_text = retra({"build", "chess", "--endgame", "KQvKR", "--plan",
                                    "--out-of-core", "--disk", "1M", "--db", fresh});
  EXPECT_EQ(tight_text.exit, 6) << tight_text.out << tight_text.err;
  EXPECT_NE(tight_text.out.find(", --disk 1.0 MiB: does not fit"), std::string::npos)
      << tight_text.out;
  EXPECT_FALSE(std::filesystem::exists(fresh));
  const Outcome forward = retra(
      {"build", "awari", "--stones", "3", "--out-of-core", "--kernel", "forward", "--db", fresh});
  EXPECT_EQ(forward.exit, 2) << forward.out << forward.err;
  EXPECT_NE(forward.err.find("--out-of-core"), std::string::npos) << forward.err;
}

// The one-pass verifier finds a wrong value that every checksum accepts: a KQvK win made one
// move shorter than it is, and a DTM byte turned into a draw.
TEST_F(ChessCli, VerifyFindsAWrongValue) {
  for (const char* name : {"KQvK", "KQvK.dtm"}) {
    test::TempDir tmp;
    const auto copy = tmp / "db";
    std::filesystem::copy(db(), copy, std::filesystem::copy_options::recursive);
    std::size_t at = 0;
    {
      auto d = Database::open(copy);
      ASSERT_TRUE(d) << d.error().message();
      auto values = test::read_segment(**d, name);
      at = values.size();
      for (std::size_t i = 0; i < values.size() && at == values.size(); ++i) {
        const int b = static_cast<std::uint8_t>(values[i]);
        if (b > 9 && (b & 1) == (std::string(name) == "KQvK" ? 1 : 0)) at = i;  // a long win
      }
      ASSERT_LT(at, values.size());
      values[at] = std::string(name) == "KQvK" ? static_cast<std::int8_t>(values[at] - 2)
                                               : static_cast<std::int8_t>(0);
      test::rewrite_segment(**d, name, values);
    }
    const Outcome v = retra({"verify", "--db", copy.string(), "--json", "--no-progress"});
    EXPECT_EQ(v.exit, 1) << v.out << v.err;
    const auto j = nlohmann::json::parse(v.out);
    EXPECT_FALSE(j["ok"]);
    EXPECT_EQ(j["failure"]["segment"], name) << j.dump();
    EXPECT_EQ(j["failure"]["index"], at) << j.dump();  // the value check, not the statistics
    EXPECT_GE(j["failure"]["wrong_positions"].get<int>(), 1) << j.dump();
  }
}

TEST_F(ChessCli, BadPositionsAndTablesNotBuilt) {
  const auto probe = [&](const char* fen) { return retra({"probe", "--db", db(), fen}); };
  expect_failure(probe("8/8/8/8/8/8/8/KQ5k w KQ - 0 1"), 2, "castling rights 'KQ'");
  expect_failure(probe("8/8/8/8/8/4k3/8/KQ6 w - e3 0 1"), 2, "en-passant square e3");
  expect_failure(probe("8/8/8/8/8/4k3/8/KQ4P1 w - - 0 1"), 2, "pawns never stand on rank 1 or 8");
  expect_failure(probe("4P3/8/8/8/8/4k3/8/KQ6 w - - 0 1"), 2, "pawns never stand on rank 1 or 8");
  expect_failure(probe("8/8/8/8/8/1k6/8/KQ6 w - - 0 1"), 2, "the side not to move (black) is in");
  expect_failure(probe("8/8/8/8/8/8/1k6/KQ6 b - - 0 1"), 2, "kings stand next to each other");
  expect_failure(probe("8/8/8/8/8/4k3/8/KQ6 w - - x 1"), 2, "half-move clock 'x'");
  expect_failure(probe("8/8/8/8/8/4k3/8/KQ6"), 2, "the side to move");
  EXPECT_EQ(probe("8/8/8/8/8/4k3/8/KQ6 w - -").exit, 0) << "the clocks may be left out";
  expect_failure(probe("k7/8/8/8/8/8/PPPPPP2/K7 w - - 0 1"), 3, "has 8 pieces");
  expect_failure(probe("8/8/8/8/8/4k3/8/KQ4r1 w - - 0 1"), 3,
                 "build it with `retra build chess --endgame KQvKR`");
  // An en-passant square whose capture is impossible is no error: the square is ignored.
  const Outcome ep = retra({"probe", "--db", db(), "--json", "k7/8/8/3P4/8/8/8/K7 w - e6 0 1"});
  EXPECT_EQ(ep.exit, 0) << ep.err;
  expect_failure(retra({"build", "chess", "--endgame", "KQvKX", "--db", db()}), 2,
                 "unknown piece letter 'X'");
  expect_failure(retra({"build", "chess", "--pieces", "3-8", "--db", db()}), 2, "3 <= A <= B <= 7");
  expect_failure(retra({"build", "chess", "--pieces", "3", "--metrics", "wdl,foo", "--db", db()}),
                 2, "the metrics are wdl, dtz and dtm");
  expect_failure(retra({"build", "chess", "--db", db()}), 2, "name the tables");
  const Outcome j = retra({"probe", "--db", db(), "--json", "8/8/8/8/8/8/8/KQ5k w KQ - 0 1"});
  EXPECT_EQ(j.exit, 2);
  EXPECT_EQ(nlohmann::json::parse(j.out)["error"]["code"], "invalid_argument");
}

TEST(CliCorruption, FlippedBlockByteFailsVerifyAndProbe) {
  test::TempDir dir;
  const std::string db = (dir / "db").string();
  ASSERT_EQ(retra({"build", "awari", "--stones", "0-7", "--db", db, "--block-size", "4096"}).exit,
            0);
  // Flip a byte in the middle of block 3 of the 7-stone segment.
  const auto path = dir / "db" / "awari-7.rseg";
  test::damage_block(path, 3);
  const Outcome v = retra({"verify", "--db", db, "--json"});
  EXPECT_EQ(v.exit, 1) << v.err;
  const auto j = nlohmann::json::parse(v.out);
  EXPECT_FALSE(j["ok"]);
  EXPECT_EQ(j["failure"]["segment"], "7");
  EXPECT_EQ(j["failure"]["block"], 3);
  EXPECT_NE(v.err.find("block 3 "), std::string::npos) << v.err;
  // A position whose index lies in block 3 (entries 12288..16383): probing it is an error.
  const Outcome p = retra({"probe", "--db", db, "--json", "0,0,0,1,0,0,1,0,1,1,3,0"});
  ASSERT_EQ(p.exit, 4) << p.out << p.err;
  EXPECT_NE(p.err.find("block 3 "), std::string::npos) << p.err;
  EXPECT_EQ(nlohmann::json::parse(p.out)["error"]["code"], "corrupt");
  EXPECT_EQ(p.out.find("\"value\""), std::string::npos);
}

// Under an address-space limit smaller than the build needs, the plan refuses (exit 6, naming
// the limit) before anything is allocated or written; a small build fits under a generous one.
TEST(CliMemory, AnAddressSpaceLimitIsPlannedForNotHitHalfWay) {
#ifdef RETRA_SANITIZE
  GTEST_SKIP() << "the sanitizers reserve terabytes of address space: no ulimit -v";
#else
  test::TempDir dir;
  const std::string db = (dir / "db").string();
  auto under = [&](const char* kib, std::vector<std::string> args) {
    args.insert(args.begin(),
                {"-c", std::string("ulimit -v ") + kib + " && exec \"$0\" \"$@\"", RETRA_BINARY});
    return run("/bin/sh", args);
  };
  const Outcome refused =
      under("600000", {"build", "awari", "--stones", "0-20", "--db", db, "--threads", "2"});
  expect_failure(refused, 6, "ulimit -v");
  EXPECT_FALSE(std::filesystem::exists(db)) << "nothing written";
  const Outcome fits =
      under("4000000", {"build", "awari", "--stones", "0-10", "--db", db, "--threads", "2"});
  EXPECT_EQ(fits.exit, 0) << fits.err;
  // Under the limit the frontiers start at the plan's share and grow (kernels/backward.hpp,
  // Frontier): the bytes of a build without it.
  const std::string ref = (dir / "ref").string();
  ASSERT_EQ(retra({"build", "awari", "--stones", "0-10", "--db", ref, "--no-progress"}).exit, 0);
  for (int stones = 0; stones <= 10; ++stones) {
    const std::string name = "awari-" + std::to_string(stones) + ".rseg";
    EXPECT_EQ(io::read_file(dir / "ref" / name).value(), io::read_file(dir / "db" / name).value())
        << name;
  }
#endif
}

// The 14-stone segment of Awari built while being killed (SIGKILL) at random times, again and
// again, with a checkpoint at nearly every level: the runs resume from the checkpoints and the
// last one ends with the bytes of a build that was never killed, and removes the checkpoint.
TEST(CliResume, BuildsKilledAtRandomTimesResumeAndEndByteIdentical) {
  test::TempDir dir;
  const std::string ref = (dir / "ref").string(), db = (dir / "db").string();
  for (const auto& d : {ref, db})
    ASSERT_EQ(retra({"build", "awari", "--stones", "0-13", "--db", d, "--no-progress"}).exit, 0);
  const auto t0 = std::chrono::steady_clock::now();
  ASSERT_EQ(retra({"build", "awari", "--stones", "14", "--db", ref, "--no-progress"}).exit, 0);
  const auto whole =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0);
  std::mt19937 rng(14);
  std::uniform_int_distribution<int> percent(20, 90);
  int kills = 0, resumes = 0, shown = 0;
  for (int round = 0;; ++round) {
    ASSERT_LT(round, 60) << "the build never finished between kills";
    const auto after = std::chrono::milliseconds(whole.count() * percent(rng) / 100);
    const Outcome r = retra({"build", "awari", "--stones", "14", "--db", db, "--threads", "2",
                             "--checkpoint-every", "0.001", "--no-progress"},
                            round < 40 ? after : std::chrono::milliseconds{});
    if (r.out.find("resuming from checkpoint awari-14.ckpt") != std::string::npos) ++resumes;
    EXPECT_EQ(r.err.find("AddressSanitizer"), std::string::npos) << r.err;
    if (r.exit == 0) {
      if (resumes == 0) {  // every kill came before the first checkpoint: go again
        ASSERT_EQ(retra({"build", "awari", "--stones", "14", "--db", db, "--force", "--no-progress",
                         "--checkpoint-every", "0"})
                      .exit,
                  0);
        continue;
      }
      break;
    }
    ASSERT_EQ(r.exit, 128 + SIGKILL) << r.out << r.err;
    ++kills;
    // How far it got, from the manifest (written just after each checkpoint is on disk).
    if (std::filesystem::exists(dir / "db" / "awari-14.ckpt") &&
        retra({"info", "--db", db})
                .out.find("building 14: checkpoint awari-14.ckpt at 14 "
                          "stones: threshold") != std::string::npos)
      ++shown;
  }
  RecordProperty("kills", kills);
  RecordProperty("resumes", resumes);
  EXPECT_GT(kills, 0);
  EXPECT_GT(resumes, 0);
  EXPECT_GT(shown, 0);
  EXPECT_EQ(retra({"info", "--db", db}).out.find("building"), std::string::npos);
  EXPECT_EQ(io::read_file(dir / "ref" / "awari-14.rseg").value(),
            io::read_file(dir / "db" / "awari-14.rseg").value());
  EXPECT_FALSE(std::filesystem::exists(dir / "db" / "awari-14.ckpt"));
  EXPECT_EQ(retra({"verify", "--db", db}).exit, 0);
}

}  // namespace
}  // namespace retra
