// The web explorer (`retra serve`): its request handling called directly (routes, answers equal to
// the probe report, the new move fields checked against the children's own probes, errors), and
// the HTTP server on a loopback port (keep-alive clients side by side, a thousand malformed
// requests, methods other than GET).
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <random>
#include <thread>

#include <gtest/gtest.h>
#include <httplib.h>

#include "src/serve/explorer.hpp"
#include "test_util.hpp"

namespace retra {
namespace {

using Params = std::multimap<std::string, std::string>;

class ServeTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new test::TempDir();
    for (auto [game, target, name] : {std::tuple{"awari", "8", "awari"},
                                      {"xiangqi", "KRKG", "xq"},
                                      {"chess", "KRvK", "chess"}}) {
      auto r = build(test::build_request(game, {target}, dir_->path() / name));
      ASSERT_TRUE(r) << r.error().message();
    }
    auto ex = serve::Explorer::open(
        {dir_->path() / "awari", dir_->path() / "xq", dir_->path() / "chess"});
    ASSERT_TRUE(ex) << ex.error().message();
    explorer_ = ex->release();
  }
  static void TearDownTestSuite() {
    delete explorer_;
    delete dir_;
  }
  static nlohmann::json get_json(const std::string& path, const Params& p, int status = 200) {
    const serve::Response r = explorer_->get(path, p);
    EXPECT_EQ(r.status, status) << path << ": " << r.body;
    EXPECT_EQ(r.content_type, "application/json");
    return nlohmann::json::parse(r.body);
  }
  static const serve::Served& served(const std::string& name) {
    for (const auto& s : explorer_->databases())
      if (s.name == name) return s;
    throw std::runtime_error("not served: " + name);
  }
  static nlohmann::json probe(const std::string& db, const std::string& position) {
    return get_json("/api/probe", {{"db", db}, {"position", position}});
  }

  static inline test::TempDir* dir_ = nullptr;
  static inline serve::Explorer* explorer_ = nullptr;
};

TEST_F(ServeTest, ListsTheDatabasesByDirectoryName) {
  const auto j = get_json("/api/databases", {});
  ASSERT_EQ(j["databases"].size(), 3u);
  EXPECT_EQ(j["databases"][0]["name"], "awari");
  EXPECT_EQ(j["databases"][1]["game"], "xiangqi");
  EXPECT_EQ(j["databases"][2]["name"], "chess");
  // Nine Awari segments (0..8 stones), the KRKG closure, the KRvK tables.
  EXPECT_EQ(j["databases"][0]["segments"].size(), 9u);
}

TEST_F(ServeTest, TwoDirectoriesWithOneNameGetTwoNames) {
  auto ex = serve::Explorer::open({dir_->path() / "awari", dir_->path() / "awari/."});
  ASSERT_TRUE(ex) << ex.error().message();
  EXPECT_EQ((*ex)->databases()[0].name, "awari");
  EXPECT_EQ((*ex)->databases()[1].name, "awari-2");
}

TEST_F(ServeTest, ProbeAnswersAreTheProbeReports) {
  for (auto [db, position] : {std::pair{"awari", "1,1,1,1,1,2,1,0,0,0,0,0"},
                              {"xq", "3k5/9/9/9/9/9/9/9/4R4/4K4 w"},
                              {"chess", "8/8/8/4k3/8/8/8/4K2R w - - 0 1"}}) {
    const auto& s = served(db);
    auto report = s.game->probe_report(*s.db, position);
    ASSERT_TRUE(report) << report.error().message();
    EXPECT_EQ(probe(db, position), report->json) << db;
    EXPECT_EQ(get_json("/api/stats", {{"db", db}}), s.game->stats_report(*s.db, {})->json);
  }
}

// Each move's `child` is the position it leads to: probing it gives the value the move shows,
// seen from the other side. Walks a few plies from each start.
TEST_F(ServeTest, EveryMovesChildHasTheValueTheMoveShows) {
  std::mt19937 rng(20261127);
  for (auto [db, start] : {std::pair{"awari", "2,1,0,1,1,2,1,0,0,0,0,0"},
                           {"xq", "3k5/9/9/9/9/9/9/9/4R4/4K4 w"},
                           {"xq", "3k1g3/9/9/9/9/9/9/4R4/9/4K4 w"},
                           {"chess", "8/8/8/4k3/8/8/8/4K2R w - - 0 1"}}) {
    std::string position = start;
    int checked = 0;
    for (int ply = 0; ply < 6; ++ply) {
      const auto j = probe(db, position);
      std::vector<nlohmann::json> legal;
      for (const auto& m : j["moves"]) {
        if (m.contains("legal") && !m["legal"].get<bool>()) {
          EXPECT_TRUE(m["child"].is_null());
          continue;
        }
        legal.push_back(m);
        const auto c = probe(db, m["child"].get<std::string>());
        ++checked;
        if (std::string(db) == "awari") {
          EXPECT_EQ(m["value"].get<int>(), m["captured"].get<int>() - c["value"].get<int>());
        } else if (std::string(db) == "xq") {
          // DTM bytes: 0 draw, n > 0 the mover at the child is decided in n plies; the parent's
          // view of it is n + 1 plies (docs/XIANGQI.md).
          const int v = c["value"].get<int>();
          EXPECT_EQ(m["value"].get<int>(), v == 0 ? 0 : v + 1) << m["child"];
        } else {
          const std::map<std::string, std::string> flip = {{"win", "loss"},
                                                           {"cursed-win", "blessed-loss"},
                                                           {"draw", "draw"},
                                                           {"blessed-loss", "cursed-win"},
                                                           {"loss", "win"}};
          EXPECT_EQ(m["wdl"], flip.at(c["wdl"].get<std::string>())) << m["child"];
        }
        const std::string outcome = m["outcome"];
        EXPECT_TRUE(outcome == "win" || outcome == "draw" || outcome == "loss") << outcome;
      }
      if (legal.empty()) break;
      position = legal[rng() % legal.size()]["child"].get<std::string>();
    }
    EXPECT_GT(checked, 10) << db;
  }
}

TEST_F(ServeTest, BadRequestsGetJsonErrorsThatSayWhy) {
  auto message = [](const nlohmann::json& j) { return j["error"]["message"].get<std::string>(); };
  EXPECT_NE(
      message(get_json("/api/probe", {{"db", "awari"}, {"position", "1,2,x"}}, 400)).find("pit"),
      std::string::npos);
  EXPECT_NE(
      message(get_json("/api/probe", {{"position", "1"}}, 400)).find("missing parameter 'db'"),
      std::string::npos);
  EXPECT_NE(message(get_json("/api/probe", {{"db", "awari"}}, 400)).find("'position'"),
            std::string::npos);
  EXPECT_NE(message(get_json("/api/probe", {{"db", "awari"}, {"db", "xq"}, {"position", "1"}}, 400))
                .find("given twice"),
            std::string::npos);
  EXPECT_NE(message(get_json("/api/probe", {{"db", "/etc"}, {"position", "1"}}, 404))
                .find("served: awari, xq, chess"),
            std::string::npos);
  EXPECT_NE(
      message(get_json("/api/probe", {{"db", "awari"}, {"position", std::string(300, '1')}}, 400))
          .find("longer than"),
      std::string::npos);
  // A position of a segment the database does not hold.
  EXPECT_EQ(get_json("/api/probe", {{"db", "awari"}, {"position", "9,9,0,0,0,0,0,0,0,0,0,0"}},
                     404)["error"]["code"],
            "not_found");
  EXPECT_EQ(get_json("/api/probe", {{"db", "xq"}, {"position", "4k4/9/9/9/9/9/9/9/9/3K1C3 w"}},
                     404)["error"]["code"],
            "not_found");
  get_json("/api/nothing", {}, 404);
  get_json("/static/../manifest.json", {}, 404);
  get_json("/static/", {}, 404);
}

TEST_F(ServeTest, PagesAndScriptsAreCompiledIn) {
  for (const char* path :
       {"/", "/explore", "/static/explore.js", "/static/games/awari.js", "/static/games/xiangqi.js",
        "/static/games/chess.js", "/static/style.css"}) {
    const serve::Response r = explorer_->get(path, {});
    EXPECT_EQ(r.status, 200) << path;
    EXPECT_GT(r.body.size(), 200u) << path;
  }
  EXPECT_EQ(explorer_->get("/static/explore.js", {}).content_type,
            "text/javascript; charset=utf-8");
  EXPECT_NE(explorer_->get("/explore", {}).body.find("/static/explore.js"), std::string::npos);
}

TEST_F(ServeTest, MissingOrForeignDirectoriesAreRefusedAtStart) {
  auto missing = serve::Explorer::open({dir_->path() / "nothing-here"});
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code(), Errc::not_found);
  auto none = serve::Explorer::open({});
  ASSERT_FALSE(none);
  EXPECT_EQ(none.error().code(), Errc::invalid_argument);
}

// ---- over HTTP ----------------------------------------------------------------------------------

class ServeHttpTest : public ServeTest {
 protected:
  void SetUp() override {
    serve::ServeOptions opt;
    opt.port = 0;
    opt.read_timeout_s = 2;
    server_ = std::make_unique<serve::Server>(*explorer_, opt);
    auto port = server_->bind();
    ASSERT_TRUE(port) << port.error().message();
    port_ = *port;
    thread_ = std::thread([this] { ASSERT_TRUE(server_->run()); });
  }
  void TearDown() override {
    server_->stop();
    thread_.join();
  }
  httplib::Client client() const {
    httplib::Client c("127.0.0.1", port_);
    c.set_keep_alive(true);
    c.set_tcp_nodelay(true);
    c.set_read_timeout(10, 0);
    return c;
  }
  static std::string probe_path(const std::string& db, const std::string& position) {
    return "/api/probe?db=" + db + "&position=" + httplib::detail::encode_query_param(position);
  }
  // Sends raw bytes on a fresh connection and reads whatever comes back (bounded).
  void send_raw(const std::string& bytes) const {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    ASSERT_GE(fd, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<std::uint16_t>(port_));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ASSERT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
    timeval tv{2, 0};
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    (void)!::write(fd, bytes.data(), bytes.size());
    ::shutdown(fd, SHUT_WR);
    char buf[4096];
    while (::read(fd, buf, sizeof buf) > 0) {
    }
    ::close(fd);
  }

  std::unique_ptr<serve::Server> server_;
  std::thread thread_;
  int port_ = 0;
};

TEST_F(ServeHttpTest, KeepAliveClientsSideBySideGetTheRightAnswers) {
  const std::vector<std::string> positions = {"1,1,1,1,1,2,1,0,0,0,0,0", "0,0,0,0,0,1,1,0,0,0,0,0",
                                              "2,0,0,0,0,0,0,0,0,0,0,2", "0,3,0,0,0,0,1,0,0,0,0,2"};
  std::vector<nlohmann::json> expected;
  for (const auto& p : positions) expected.push_back(probe("awari", p));
  std::atomic<int> ok{0}, wrong{0};
  std::vector<std::thread> clients;
  for (int t = 0; t < 8; ++t)
    clients.emplace_back([&, t] {
      auto c = client();
      for (int k = 0; k < 100; ++k) {
        const std::size_t i = static_cast<std::size_t>(t + k) % positions.size();
        auto res = c.Get(probe_path("awari", positions[i]));
        if (res && res->status == 200 && nlohmann::json::parse(res->body) == expected[i])
          ++ok;
        else
          ++wrong;
      }
    });
  for (auto& t : clients) t.join();
  EXPECT_EQ(ok, 800);
  EXPECT_EQ(wrong, 0);
}

// More clients than connection threads, connecting at once: the later ones wait their turn (a
// listen backlog beyond httplib's 5), none is refused or dropped.
TEST_F(ServeHttpTest, SixtyFourClientsConnectingAtOnceAreAllServed) {
  const std::string position = "1,1,1,1,1,2,1,0,0,0,0,0";
  const nlohmann::json expected = probe("awari", position);
  std::atomic<int> ok{0};
  std::vector<std::thread> clients;
  for (int t = 0; t < 64; ++t)
    clients.emplace_back([&] {
      httplib::Client c("127.0.0.1", port_);
      c.set_keep_alive(false);
      c.set_read_timeout(30, 0);
      auto r = c.Get(probe_path("awari", position));
      if (r && r->status == 200 && nlohmann::json::parse(r->body) == expected) ++ok;
    });
  for (auto& t : clients) t.join();
  EXPECT_EQ(ok, 64);
}

TEST_F(ServeHttpTest, AThousandMalformedRequestsLeaveItServing) {
  std::mt19937 rng(7);
  auto c = client();
  int answered = 0;
  for (int k = 0; k < 1000; ++k) {
    std::string junk;
    const int len = static_cast<int>(rng() % 64);
    for (int i = 0; i < len; ++i) junk += static_cast<char>(rng() % 256);
    // Counts an answer and checks its status (lo..hi); no answer (a closed connection) is
    // allowed, a crash or hang is not.
    auto check = [&](const httplib::Result& r, int lo, int hi) {
      if (!r) return;
      ++answered;
      EXPECT_GE(r->status, lo) << r->body;
      EXPECT_LE(r->status, hi) << r->body;
    };
    switch (k % 5) {
      case 0:  // random bytes as the position, percent-encoded
        check(c.Get(probe_path(k % 2 ? "awari" : "xq", junk)), 400, 400);
        break;
      case 1:  // broken percent-encodings
        check(c.Get("/api/probe?db=awari&position=%zz%" + std::to_string(k) + "%"), 400, 499);
        break;
      case 2:  // an over-long request line
        check(c.Get("/api/probe?db=chess&position=" + std::string(9000 + k, 'K')), 400, 499);
        break;
      case 3:  // another method
        check(c.Post("/api/probe", junk, "text/plain"), 405, 405);
        break;
      default:  // not HTTP at all
        send_raw(junk + "\r\n\r\n");
    }
  }
  EXPECT_GE(answered, 700);
  auto r = client().Get(probe_path("awari", "1,1,1,1,1,2,1,0,0,0,0,0"));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(nlohmann::json::parse(r->body), probe("awari", "1,1,1,1,1,2,1,0,0,0,0,0"));
}

TEST_F(ServeHttpTest, AnotherServerOnTheSamePortIsRefusedWithAMessage) {
  serve::ServeOptions opt;
  opt.port = port_;
  serve::Server second(*explorer_, opt);
  auto r = second.bind();
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message().find("choose another --port"), std::string::npos);
}

}  // namespace
}  // namespace retra
