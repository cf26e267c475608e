#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "demi/parallel/gloo_communicator.hpp"

namespace demi {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

fs::path FreshDir(const std::string& name) {
  static std::atomic<int> counter{0};
  const fs::path dir =
      fs::temp_directory_path() / StrCat("demi_gloo_", name, "_", getpid(), "_", counter++, "_",
                                         Clock::now().time_since_epoch().count());
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

void WriteFile(const fs::path& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

/// Checks inside a child: a failure becomes the child's error report.
void Require(bool cond, const std::string& what) {
  if (!cond) throw std::runtime_error(what);
}

GlooOptions Options(int rank, int world, const std::string& rendezvous, double timeout = 10) {
  GlooOptions options;
  options.rank = rank;
  options.world_size = world;
  options.rendezvous = rendezvous;
  options.host = "127.0.0.1";
  options.timeout_seconds = timeout;
  return options;
}

std::string FileUrl(const fs::path& dir) { return "file://" + (dir / "store").string(); }

struct Outcome {
  int exit_code = -1;  // -1: killed by the parent, 128 + n: killed by signal n
  std::string error;   // what the child's body threw, if anything
};

/// Forks one child per rank in `ranks`, each running body(rank) and exiting 0
/// on return, 1 if it threw (the message goes to dir/error<rank>). Waits at
/// most `limit_s`; children still running then are killed. With
/// `until_first`, the others are killed once ranks[0] has exited.
std::vector<Outcome> RunRanks(const std::vector<int>& ranks, const fs::path& dir,
                              const std::function<void(int)>& body, double limit_s,
                              bool until_first = false) {
  std::vector<pid_t> pids;
  for (int rank : ranks) {
    const pid_t pid = fork();
    CHECK_GE(pid, 0) << "fork failed";
    if (pid == 0) {
      int code = 0;
      try {
        body(rank);
      } catch (const std::exception& e) {
        WriteFile(dir / StrCat("error", rank), e.what());
        code = 1;
      } catch (...) {
        WriteFile(dir / StrCat("error", rank), "non-standard exception");
        code = 1;
      }
      _exit(code);
    }
    pids.push_back(pid);
  }
  std::vector<Outcome> outcomes(ranks.size());
  std::vector<bool> done(ranks.size(), false);
  size_t left = ranks.size();
  const auto start = Clock::now();
  while (left > 0 && SecondsSince(start) < limit_s && !(until_first && done[0])) {
    for (size_t i = 0; i < pids.size(); ++i) {
      int status = 0;
      if (done[i] || waitpid(pids[i], &status, WNOHANG) != pids[i]) continue;
      done[i] = true;
      --left;
      outcomes[i].exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  for (size_t i = 0; i < pids.size(); ++i) {
    if (!done[i]) {
      kill(pids[i], SIGKILL);
      waitpid(pids[i], nullptr, 0);
    }
    outcomes[i].error = ReadFile(dir / StrCat("error", ranks[i]));
  }
  return outcomes;
}

std::vector<int> Ranks(int n) {
  std::vector<int> ranks(n);
  for (int i = 0; i < n; ++i) ranks[i] = i;
  return ranks;
}

void ExpectAllSucceeded(const std::vector<Outcome>& outcomes) {
  for (size_t i = 0; i < outcomes.size(); ++i) {
    EXPECT_EQ(outcomes[i].exit_code, 0) << "rank " << i << ": " << outcomes[i].error;
  }
}

std::vector<float> RandomValues(int rank, size_t count) {
  std::mt19937 engine(1234 + rank);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> values(count);
  for (float& v : values) v = dist(engine);
  return values;
}

/// Every rank sums exact small integers, a few tiny counts, and a ~24 MB
/// buffer of random floats whose result it writes for the parent to compare.
void CheckAllReduce(int world, const std::string& name) {
  const fs::path dir = FreshDir(name);
  const size_t big = 6 * 1024 * 1024 + 13;
  auto outcomes = RunRanks(
      Ranks(world), dir,
      [&](int rank) {
        GlooCommunicator comm(Options(rank, world, FileUrl(dir)));
        Require(comm.rank() == rank && comm.size() == world, "rank/size");
        Require(std::string(comm.backend()) == "gloo", "backend");
        std::vector<float> exact(1000);
        for (size_t i = 0; i < exact.size(); ++i) {
          exact[i] = static_cast<float>((rank + 1) * i);
        }
        comm.AllReduceSum(exact.data(), exact.size());
        const float ranks_sum = world * (world + 1) / 2.0f;
        for (size_t i = 0; i < exact.size(); ++i) {
          Require(exact[i] == ranks_sum * i, StrCat("exact[", i, "] = ", exact[i]));
        }
        for (size_t count : {size_t{1}, size_t{2}}) {
          std::vector<float> small(count, rank + 0.5f);
          comm.AllReduceSum(small.data(), count);
          for (float v : small) {
            Require(v == world * world / 2.0f, StrCat("small sum ", v));
          }
        }
        float untouched = 42;
        comm.AllReduceSum(&untouched, 0);
        Require(untouched == 42, "zero-count all-reduce wrote data");
        std::vector<float> values = RandomValues(rank, big);
        comm.AllReduceSum(values.data(), values.size());
        WriteFile(dir / StrCat("sum", rank),
                  std::string(reinterpret_cast<const char*>(values.data()),
                              values.size() * sizeof(float)));
      },
      20);
  ExpectAllSucceeded(outcomes);
  const std::string first = ReadFile(dir / "sum0");
  ASSERT_EQ(first.size(), big * sizeof(float));
  for (int rank = 1; rank < world; ++rank) {
    EXPECT_TRUE(ReadFile(dir / StrCat("sum", rank)) == first)
        << "rank " << rank << "'s sum differs in bits from rank 0's";
  }
  std::vector<double> expected(big, 0.0);
  for (int rank = 0; rank < world; ++rank) {
    const std::vector<float> values = RandomValues(rank, big);
    for (size_t i = 0; i < big; ++i) expected[i] += values[i];
  }
  const float* got = reinterpret_cast<const float*>(first.data());
  size_t bad = 0;
  for (size_t i = 0; i < big; ++i) {
    if (std::fabs(got[i] - expected[i]) > 1e-6 * world) ++bad;
  }
  EXPECT_EQ(bad, 0u) << "of " << big << " sums, e.g. [7] = " << got[7] << " vs " << expected[7];
  fs::remove_all(dir);
}

TEST(GlooCommunicatorTest, AllReduceSumTwoRanks) { CheckAllReduce(2, "allreduce2"); }

TEST(GlooCommunicatorTest, AllReduceSumThreeRanks) { CheckAllReduce(3, "allreduce3"); }

TEST(GlooCommunicatorTest, BroadcastFromNonZeroRootAndBarrier) {
  const fs::path dir = FreshDir("broadcast");
  const int world = 3;
  auto outcomes = RunRanks(
      Ranks(world), dir,
      [&](int rank) {
        GlooCommunicator comm(Options(rank, world, FileUrl(dir)));
        for (size_t bytes : {size_t{1001}, size_t{3 << 20}}) {
          std::vector<unsigned char> data(bytes, 0xEE);
          if (rank == 2) {
            for (size_t i = 0; i < bytes; ++i) data[i] = static_cast<unsigned char>(i * 7 + 3);
          }
          comm.Broadcast(data.data(), bytes, 2);
          for (size_t i = 0; i < bytes; ++i) {
            if (data[i] != static_cast<unsigned char>(i * 7 + 3)) {
              Require(false, StrCat("byte ", i, " of ", bytes, " on rank ", rank));
            }
          }
        }
        // Ranks reach the barrier at different times; none may leave it
        // before every rank has written its mark.
        std::this_thread::sleep_for(std::chrono::milliseconds(150 * rank));
        WriteFile(dir / StrCat("mark", rank), "x");
        comm.Barrier();
        for (int i = 0; i < world; ++i) {
          Require(fs::exists(dir / StrCat("mark", i)),
                  StrCat("rank ", rank, " left the barrier before rank ", i, " arrived"));
        }
      },
      15);
  ExpectAllSucceeded(outcomes);
  fs::remove_all(dir);
}

TEST(GlooCommunicatorTest, StoreSetGetAndSingleRank) {
  const fs::path dir = FreshDir("store");
  auto outcomes = RunRanks(
      Ranks(2), dir,
      [&](int rank) {
        GlooCommunicator comm(Options(rank, 2, FileUrl(dir)));
        const std::string id("unique\0id\xff", 10);
        if (rank == 1) comm.StoreSet("nccl_id", id);
        Require(comm.StoreGet("nccl_id") == id, "StoreGet value");
      },
      15);
  ExpectAllSucceeded(outcomes);

  // One rank: collectives are no-ops; a key nobody sets times out.
  outcomes = RunRanks(
      {0}, dir,
      [&](int rank) {
        GlooOptions options = Options(0, 1, FileUrl(dir / "single"), 1);
        GlooCommunicator comm(options);
        float x = 3;
        comm.AllReduceSum(&x, 1);
        comm.Barrier();
        comm.Broadcast(&x, sizeof(x), 0);
        Require(x == 3, "single-rank all-reduce changed data");
        const auto start = Clock::now();
        try {
          comm.StoreGet("never_set");
        } catch (const CommError& e) {
          const std::string what = e.what();
          Require(what.find("'never_set'") != std::string::npos, what);
          Require(SecondsSince(start) < 3, "StoreGet waited too long");
          return;
        }
        Require(false, "StoreGet of a missing key returned");
      },
      10);
  ExpectAllSucceeded(outcomes);
  fs::remove_all(dir);
}

TEST(GlooCommunicatorTest, RankThatNeverJoinsTimesOut) {
  const fs::path dir = FreshDir("missing");
  const std::string url = FileUrl(dir);
  // Rank 1 of 2 is never started.
  auto outcomes = RunRanks(
      {0}, dir,
      [&](int rank) {
        const auto start = Clock::now();
        try {
          GlooCommunicator comm(Options(0, 2, url, 2));
        } catch (const CommError& e) {
          WriteFile(dir / "message", e.what());
          WriteFile(dir / "seconds", std::to_string(SecondsSince(start)));
          return;
        }
        Require(false, "constructor returned without rank 1");
      },
      10);
  ExpectAllSucceeded(outcomes);
  const std::string message = ReadFile(dir / "message");
  EXPECT_NE(message.find("rank 0 of 2 waited 2 s for rank(s) 1 to join"), std::string::npos)
      << message;
  EXPECT_NE(message.find(url), std::string::npos) << message;
  EXPECT_NE(message.find("--world_size"), std::string::npos) << message;
  const double seconds = std::stod(ReadFile(dir / "seconds"));
  EXPECT_GE(seconds, 1.9);
  EXPECT_LT(seconds, 5.0);
  fs::remove_all(dir);
}

TEST(GlooCommunicatorTest, StopSignalEndsTheWaitNamingTheMissingRank) {
  const fs::path dir = FreshDir("signalled");
  const std::string url = FileUrl(dir);
  // Rank 1 of 2 is never started; a stop signal arrives after 30 polls
  // (about 0.3 s), long before the 60 s timeout.
  auto outcomes = RunRanks(
      {0}, dir,
      [&](int rank) {
        GlooOptions options = Options(0, 2, url, 60);
        int polls = 0;
        options.stop_signal = [&polls] { return ++polls > 30 ? "SIGTERM" : ""; };
        try {
          GlooCommunicator comm(options);
        } catch (const CommError& e) {
          WriteFile(dir / "message", e.what());
          return;
        }
        Require(false, "constructor returned without rank 1");
      },
      30);
  ExpectAllSucceeded(outcomes);
  const std::string message = ReadFile(dir / "message");
  EXPECT_NE(message.find("rank 0 of 2: stopped by SIGTERM after 0 s waiting for rank(s) 1 to join"),
            std::string::npos)
      << message;
  fs::remove_all(dir);
}

TEST(GlooCommunicatorTest, PeerThatExitsMidRunRaisesCommError) {
  const fs::path dir = FreshDir("exit");
  const auto start = Clock::now();
  auto outcomes = RunRanks(
      Ranks(2), dir,
      [&](int rank) {
        GlooCommunicator comm(Options(rank, 2, FileUrl(dir), 8));
        std::vector<float> data(1 << 16, 1.0f);
        comm.AllReduceSum(data.data(), data.size());
        if (rank == 1) _exit(7);
        try {
          comm.AllReduceSum(data.data(), data.size());
        } catch (const CommError& e) {
          const std::string what = e.what();
          Require(what.find("AllReduceSum") != std::string::npos, what);
          Require(what.find("rank 0 of 2") != std::string::npos, what);
          Require(what.find("peer may have exited") != std::string::npos, what);
          // Gloo names the peer by its address; the message by its rank too.
          Require(what.find(" is rank 1)") != std::string::npos, what);
          try {
            comm.Barrier();
          } catch (const CommError& later) {
            Require(std::string(later.what()).find("earlier") != std::string::npos, later.what());
            return;
          }
          Require(false, "Barrier after a failed collective returned");
        }
        Require(false, "AllReduceSum without the peer returned");
      },
      15);
  EXPECT_EQ(outcomes[0].exit_code, 0) << outcomes[0].error;
  EXPECT_EQ(outcomes[1].exit_code, 7) << outcomes[1].error;
  // The closed connection is noticed long before the 8 s timeout.
  EXPECT_LT(SecondsSince(start), 6.0);
  fs::remove_all(dir);
}

TEST(GlooCommunicatorTest, StuckPeerTimesOut) {
  const fs::path dir = FreshDir("stuck");
  auto outcomes = RunRanks(
      Ranks(2), dir,
      [&](int rank) {
        GlooCommunicator comm(Options(rank, 2, FileUrl(dir), 1.5));
        comm.Barrier();
        if (rank == 1) {
          std::this_thread::sleep_for(std::chrono::seconds(30));  // killed by the parent
          return;
        }
        const auto start = Clock::now();
        try {
          comm.Barrier();
        } catch (const CommError& e) {
          const double seconds = SecondsSince(start);
          Require(seconds > 1.0 && seconds < 4.0, StrCat("timed out after ", seconds, " s"));
          Require(std::string(e.what()).find("Barrier on rank 0 of 2") != std::string::npos,
                  e.what());
          return;
        }
        Require(false, "Barrier with a stuck peer returned");
      },
      10, /*until_first=*/true);
  EXPECT_EQ(outcomes[0].exit_code, 0) << outcomes[0].error;
  fs::remove_all(dir);
}

TEST(GlooCommunicatorTest, KeysOfAnEarlierRunAreRejected) {
  const fs::path dir = FreshDir("stale");
  auto run = [&](const std::string& run_id) {
    return RunRanks(
        Ranks(2), dir,
        [&](int rank) {
          GlooOptions options = Options(rank, 2, FileUrl(dir), 3);
          options.run_id = run_id;
          GlooCommunicator comm(options);
          comm.Barrier();
        },
        10);
  };
  ExpectAllSucceeded(run("first"));
  const auto start = Clock::now();
  auto outcomes = run("first");
  EXPECT_LT(SecondsSince(start), 3.0);  // rejected before any wait
  for (const Outcome& outcome : outcomes) {
    EXPECT_EQ(outcome.exit_code, 1);
    EXPECT_NE(outcome.error.find("earlier run"), std::string::npos) << outcome.error;
    EXPECT_NE(outcome.error.find("--run_id"), std::string::npos) << outcome.error;
  }
  for (int rank = 0; rank < 2; ++rank) fs::remove(dir / StrCat("error", rank));
  ExpectAllSucceeded(run("second"));
  fs::remove_all(dir);
}

int FreePort() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof(addr);
  CHECK_EQ(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  CHECK_EQ(getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  close(fd);
  return ntohs(addr.sin_port);
}

bool Accepts(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(port);
  const bool ok = connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
  close(fd);
  return ok;
}

/// A redis-server on 127.0.0.1 for the life of the object.
class RedisServer {
 public:
  explicit RedisServer(int port) : port_(port) {
    pid_ = fork();
    if (pid_ == 0) {
      if (freopen("/dev/null", "w", stdout) == nullptr) _exit(126);
      const std::string port_text = std::to_string(port);
      execlp("redis-server", "redis-server", "--port", port_text.c_str(), "--bind", "127.0.0.1",
             "--save", "", "--appendonly", "no", static_cast<char*>(nullptr));
      _exit(127);
    }
  }
  ~RedisServer() {
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
  /// Waits up to 5 s for the server to accept connections.
  bool Ready() const {
    const auto start = Clock::now();
    while (SecondsSince(start) < 5) {
      if (Accepts(port_)) return true;
      int status = 0;
      if (waitpid(pid_, &status, WNOHANG) == pid_) return false;  // exec failed or it died
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return false;
  }

 private:
  int port_;
  pid_t pid_;
};

TEST(GlooCommunicatorTest, AllReduceThroughRedis) {
  if (system("command -v redis-server > /dev/null 2>&1") != 0) {
    GTEST_SKIP() << "redis-server is not installed";
  }
  const int port = FreePort();
  RedisServer server(port);
  ASSERT_TRUE(server.Ready()) << "redis-server did not start on port " << port;
  const fs::path dir = FreshDir("redis");
  const std::string url = StrCat("redis://127.0.0.1:", port);
  auto outcomes = RunRanks(
      Ranks(2), dir,
      [&](int rank) {
        GlooCommunicator comm(Options(rank, 2, url));
        std::vector<float> data(100001, rank + 1.0f);
        comm.AllReduceSum(data.data(), data.size());
        for (float v : data) {
          if (v != 3.0f) Require(false, StrCat("sum ", v));
        }
      },
      15);
  ExpectAllSucceeded(outcomes);

  // A Redis nobody listens on is a CommError naming it.
  const std::string dead = StrCat("redis://127.0.0.1:", FreePort());
  try {
    GlooCommunicator comm(Options(0, 2, dead, 2));
    ADD_FAILURE() << "constructed through " << dead;
  } catch (const CommError& e) {
    EXPECT_NE(std::string(e.what()).find("cannot reach Redis"), std::string::npos) << e.what();
  }
  fs::remove_all(dir);
}

std::string ConstructionError(const GlooOptions& options) {
  try {
    GlooCommunicator comm(options);
  } catch (const CommError& e) {
    return StrCat("CommError instead of Error: ", e.what());
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

TEST(GlooCommunicatorTest, BadOptionsThrowError) {
  std::string message = ConstructionError(Options(0, 2, "ftp://x"));
  EXPECT_NE(message.find("'ftp://x' is neither file:///shared/dir nor redis://host:port"),
            std::string::npos)
      << message;
  message = ConstructionError(Options(2, 2, "file:///tmp/x"));
  EXPECT_NE(message.find("rank 2 is outside [0, 2)"), std::string::npos) << message;
  message = ConstructionError(Options(-1, 2, "file:///tmp/x"));
  EXPECT_NE(message.find("rank -1 is outside"), std::string::npos) << message;
  message = ConstructionError(Options(0, 2, "redis://host:port"));
  EXPECT_NE(message.find("bad port 'port'"), std::string::npos) << message;
  message = ConstructionError(Options(0, 2, "file:///tmp/x", 0));
  EXPECT_NE(message.find("timeout must be a positive"), std::string::npos) << message;
  message = ConstructionError(Options(0, 2, "file:///proc/demi_no_such_dir/x"));
  EXPECT_NE(message.find("cannot create the rendezvous directory '/proc/demi_no_such_dir/x'"),
            std::string::npos)
      << message;
}

}  // namespace
}  // namespace demi
