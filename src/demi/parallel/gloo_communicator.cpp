#include "demi/parallel/gloo_communicator.hpp"

#include <gloo/allreduce.h>
#include <gloo/barrier.h>
#include <gloo/broadcast.h>
#include <gloo/common/error.h>
#include <gloo/math.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/file_store.h>
#include <gloo/rendezvous/redis_store.h>
#include <gloo/rendezvous/store.h>
#include <gloo/transport/pair.h>
#include <gloo/transport/tcp/device.h>
#include <hiredis/hiredis.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <stdexcept>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include "demi/parallel/rendezvous.hpp"

namespace demi {
namespace {

using Keys = std::vector<std::string>;
using Millis = std::chrono::milliseconds;

/// The end of a message about a wait or collective that timed out.
std::string TimeoutHint(const GlooOptions& options) {
  return StrCat("(timeout: ", options.names.timeout, ")");
}

std::string Hostname() {
  char name[256] = {};
  if (gethostname(name, sizeof(name) - 1) != 0) return "localhost";
  return name;
}

/// Gloo writes to sockets whose peer may be gone; without this, SIGPIPE would
/// kill the process instead of the write failing with EPIPE.
void IgnoreSigpipe() {
  struct sigaction current {};
  if (sigaction(SIGPIPE, nullptr, &current) != 0) return;
  if ((current.sa_flags & SA_SIGINFO) == 0 && current.sa_handler == SIG_DFL) {
    signal(SIGPIPE, SIG_IGN);
  }
}

/// Connects to Redis once and disconnects, throwing hiredis's reason when it
/// cannot. Gloo's RedisStore throws from its constructor on a failed connect
/// without freeing the context it made (a leak each time), so the store is
/// only built once this probe, which frees its context on every path, passed.
void ProbeRedis(const Rendezvous& rendezvous) {
  const timeval timeout{2, 0};
  std::unique_ptr<redisContext, void (*)(redisContext*)> context(
      redisConnectWithTimeout(rendezvous.host.c_str(), rendezvous.port, timeout), &redisFree);
  if (context == nullptr) throw std::runtime_error("hiredis could not allocate a context");
  if (context->err != 0) throw std::runtime_error(context->errstr);
}

/// FileStore keeps its key test protected; this exposes it for polling.
class CheckableFileStore : public gloo::rendezvous::FileStore {
 public:
  using FileStore::check;
  using FileStore::FileStore;
};

/// A view of a store that prefixes every key and bounds every wait by our
/// timeout. Gloo's stores wait 30 or 60 s inside get() whatever the context's
/// timeout says, and their own waits measure time in whole seconds; polling
/// here keeps both to the configured limit.
class TimedStore : public gloo::rendezvous::Store {
 public:
  using Check = std::function<bool(const Keys&)>;

  TimedStore(gloo::rendezvous::Store& base, Check check, std::string prefix, Millis timeout)
      : base_(base), check_(std::move(check)), prefix_(std::move(prefix)), timeout_(timeout) {}

  void set(const std::string& key, const std::vector<char>& data) override {
    base_.set(prefix_ + key, data);
  }

  std::vector<char> get(const std::string& key) override {
    wait({key}, timeout_);
    return base_.get(prefix_ + key);
  }

  void wait(const Keys& keys) override { wait(keys, timeout_); }

  void wait(const Keys& keys, const Millis& timeout) override {
    const Keys missing = WaitFor(keys, timeout);
    if (!missing.empty()) {
      throw gloo::IoException(StrCat("timed out after ", timeout.count(), " ms waiting for key(s) ",
                                     Join(missing), " under '", prefix_, "'"));
    }
  }

  bool Has(const std::string& key) { return check_({prefix_ + key}); }

  /// Called at every poll while waiting for `keys`, with the seconds waited
  /// and, every `report_every`, report = true: it may throw to end the wait
  /// early (a refused peer, a stop signal). Empty: none.
  using PollHook = std::function<void(const Keys& keys, double waited, bool report)>;
  void set_poll_hook(PollHook hook, double report_every) {
    poll_hook_ = std::move(hook);
    report_every_ = report_every;
  }

  /// Polls until every key is set or `timeout` passes; returns the keys
  /// still missing (empty on success).
  Keys WaitFor(const Keys& keys, Millis timeout) {
    Keys full;
    for (const std::string& key : keys) full.push_back(prefix_ + key);
    const auto start = std::chrono::steady_clock::now();
    const auto deadline = start + timeout;
    double next_report = report_every_;
    while (!check_(full)) {
      const auto now = std::chrono::steady_clock::now();
      if (poll_hook_) {
        const double waited = std::chrono::duration<double>(now - start).count();
        const bool report = report_every_ > 0 && waited >= next_report;
        if (report) next_report += report_every_;
        poll_hook_(keys, waited, report);
      }
      if (now >= deadline) return Missing(keys);
      std::this_thread::sleep_for(Millis(10));
    }
    return {};
  }

  /// Those of `keys` not set yet.
  Keys Missing(const Keys& keys) {
    Keys missing;
    for (const std::string& key : keys) {
      if (!Has(key)) missing.push_back(key);
    }
    return missing;
  }

  static std::string Join(const Keys& keys) {
    std::string out;
    for (const std::string& key : keys) out += (out.empty() ? "'" : ", '") + key + "'";
    return out;
  }

 private:
  gloo::rendezvous::Store& base_;
  Check check_;
  const std::string prefix_;
  const Millis timeout_;
  PollHook poll_hook_;
  double report_every_ = 0;
};

std::string JoinedKey(int rank) { return StrCat("joined/", rank); }
/// Left by a rank refused for a stale key, so that the ranks already waiting
/// for it fail at once with the reason instead of at the timeout.
std::string RefusedKey(int rank) { return StrCat("refused/", rank); }
std::string ConnectedKey(int rank) { return StrCat("connected/", rank); }
/// A rank's listening address for each peer, "peer=address" lines: Gloo's
/// errors name a peer by the address, these name it by rank.
std::string AddressesKey(int rank) { return StrCat("addresses/", rank); }

/// Waits until `prefix`<rank> is in the store for every rank; throws
/// CommError(message(missing ranks)) at the timeout.
template <typename Message>
void WaitForEveryRank(TimedStore& store, const std::string& prefix, int world, Millis timeout,
                      Message message) {
  Keys all;
  for (int i = 0; i < world; ++i) all.push_back(StrCat(prefix, i));
  const Keys missing = store.WaitFor(all, timeout);
  if (missing.empty()) return;
  std::string ranks;
  for (const std::string& key : missing) {
    ranks += (ranks.empty() ? "" : ", ") + key.substr(prefix.size());
  }
  throw CommError(message(ranks));
}

}  // namespace

struct GlooCommunicator::State {
  std::string where;  // the rendezvous URL, for messages
  std::string who;    // "gloo rendezvous through URL: rank R of W", for messages
  std::string host;   // the address other ranks reach this one at
  Millis timeout{0};
  std::unique_ptr<gloo::rendezvous::Store> base;
  std::unique_ptr<TimedStore> store;       // run_id/...: joins and user keys
  std::unique_ptr<TimedStore> mesh_store;  // run_id/mesh/...: Gloo's addresses
  std::shared_ptr<gloo::transport::Device> device;
  std::shared_ptr<gloo::rendezvous::Context> context;
  std::map<std::string, int> peer_ranks;  // a peer's address, as Gloo's errors show it
};

namespace {

/// Runs `step`, a use of the store: CommErrors pass, any other failure
/// becomes one naming the store.
template <typename Step>
void WithStore(const std::string& who, Step step) {
  try {
    step();
  } catch (const CommError&) {
    throw;
  } catch (const std::exception& e) {
    throw CommError(StrCat(who, ": the store failed: ", e.what()));
  }
}

std::string FreshRunHint(const GlooOptions& options) {
  return StrCat("give each run its own ", options.names.run_id, " or a fresh directory");
}

}  // namespace

GlooCommunicator::GlooCommunicator(const GlooOptions& options)
    : options_(options), state_(std::make_unique<State>()) {
  const int rank = options.rank;
  const int world = options.world_size;
  DEMI_CHECK(world >= 1, "gloo: world_size must be at least 1, not ", world);
  DEMI_CHECK(rank >= 0 && rank < world, "gloo: rank ", rank, " is outside [0, ", world,
             ") for world_size ", world);
  DEMI_CHECK(options.timeout_seconds > 0 && std::isfinite(options.timeout_seconds),
             "gloo: timeout must be a positive number of seconds, not ", options.timeout_seconds);
  DEMI_CHECK(!options.run_id.empty(), "gloo: run_id must not be empty");
  State& s = *state_;
  s.where = options.rendezvous;
  s.who = StrCat("gloo rendezvous through ", s.where, ": rank ", rank, " of ", world);
  s.host = options.host.empty() ? Hostname() : options.host;
  s.timeout = Millis(std::max<int64_t>(1, std::llround(options.timeout_seconds * 1000)));
  IgnoreSigpipe();
  OpenStore();
  // While the ranks meet, a peer refused for a stale key or a stop signal
  // ends every wait, and the waits say whom they wait for.
  auto while_waiting = [this](const Keys& keys, double waited, bool report) {
    WhileWaiting(keys, waited, report);
  };
  s.store->set_poll_hook(while_waiting, options.wait_log_seconds);
  s.mesh_store->set_poll_hook(while_waiting, options.wait_log_seconds);
  Join();
  ConnectMesh();
  WaitUntilEveryRankIsConnected();
  // Met: from now on a late twin's refusal concerns no wait of this run.
  s.store->set_poll_hook(nullptr, 0);
  s.mesh_store->set_poll_hook(nullptr, 0);
}

std::string GlooCommunicator::DescribeMissing(const Keys& keys) const {
  State& s = *state_;
  // Keys name a rank last: joined/3 and connected/3 of the run's store, and
  // Gloo's address key 3 of the mesh store.
  std::string awaited = " to publish its address";
  TimedStore* store = s.mesh_store.get();
  if (!keys.empty() && keys[0].rfind("joined/", 0) == 0) {
    awaited = " to join";
    store = s.store.get();
  } else if (!keys.empty() && keys[0].rfind("connected/", 0) == 0) {
    awaited = " to finish connecting";
    store = s.store.get();
  }
  std::string ranks;
  for (const std::string& key : store->Missing(keys)) {
    ranks += (ranks.empty() ? "" : ", ") + key.substr(key.rfind('/') + 1);
  }
  return StrCat("rank(s) ", ranks.empty() ? "(none now)" : ranks, awaited);
}

void GlooCommunicator::WhileWaiting(const Keys& keys, double waited, bool report) {
  StopIfAPeerWasRefused();
  const State& s = *state_;
  const std::string signal = options_.stop_signal ? options_.stop_signal() : "";
  if (!signal.empty()) {
    throw CommError(StrCat(s.who, ": stopped by ", signal, " after ", static_cast<int64_t>(waited),
                           " s waiting for ", DescribeMissing(keys)));
  }
  if (report) {
    LOG(INFO) << s.who << ": waiting for " << DescribeMissing(keys) << " ("
              << static_cast<int64_t>(waited) << " s of " << options_.timeout_seconds << ")";
  }
}

void GlooCommunicator::OpenStore() {
  State& s = *state_;
  const Rendezvous rendezvous = ParseRendezvous(options_.rendezvous);
  TimedStore::Check check;
  if (rendezvous.kind == Rendezvous::kFile) {
    std::error_code error;
    std::filesystem::create_directories(rendezvous.path, error);
    DEMI_CHECK(std::filesystem::is_directory(rendezvous.path), s.who,
               ": cannot create the rendezvous directory '", rendezvous.path,
               "': ", error.message());
    try {
      auto file_store = std::make_unique<CheckableFileStore>(rendezvous.path);
      CheckableFileStore* raw = file_store.get();
      check = [raw](const Keys& keys) { return raw->check(keys); };
      s.base = std::move(file_store);
    } catch (const std::exception& e) {
      ThrowError(StrCat(s.who, ": cannot use the directory '", rendezvous.path, "': ", e.what()));
    }
  } else {
    try {
      ProbeRedis(rendezvous);
      auto redis_store =
          std::make_unique<gloo::rendezvous::RedisStore>(rendezvous.host, rendezvous.port);
      gloo::rendezvous::RedisStore* raw = redis_store.get();
      check = [raw](const Keys& keys) { return raw->check(keys); };
      s.base = std::move(redis_store);
    } catch (const std::exception& e) {
      throw CommError(StrCat(s.who, ": cannot reach Redis at ", rendezvous.host, ":",
                             rendezvous.port, ": ", e.what()));
    }
  }
  s.store = std::make_unique<TimedStore>(*s.base, check, options_.run_id + "/", s.timeout);
  s.mesh_store =
      std::make_unique<TimedStore>(*s.base, check, options_.run_id + "/mesh/", s.timeout);
}

void GlooCommunicator::StopIfAPeerWasRefused() {
  const State& s = *state_;
  for (int peer = 0; peer < options_.world_size; ++peer) {
    if (!s.store->Has(RefusedKey(peer))) continue;
    throw CommError(StrCat(s.who, ": rank ", peer, " was refused: the store holds its key for ",
                           "run_id '", options_.run_id, "' from an earlier run, so keys of this ",
                           "run cannot be told from stale ones; ", FreshRunHint(options_)));
  }
}

void GlooCommunicator::Join() {
  State& s = *state_;
  const int rank = options_.rank;
  // A key of ours that exists already was left by an earlier run with this
  // run_id (or by a twin started with our rank); meshing through it would
  // pick up stale addresses.
  WithStore(s.who, [&] {
    const std::string me = StrCat(s.host, " pid ", getpid());
    if (s.store->Has(JoinedKey(rank))) {
      s.store->set(RefusedKey(rank), std::vector<char>(me.begin(), me.end()));
      throw CommError(StrCat(s.who, ": the store already holds rank ", rank, "'s key for run_id '",
                             options_.run_id,
                             "', left by an earlier run or by another process started with "
                             "this rank; ",
                             FreshRunHint(options_)));
    }
    s.store->set(JoinedKey(rank), std::vector<char>(me.begin(), me.end()));
    WaitForEveryRank(
        *s.store, "joined/", options_.world_size, s.timeout, [&](const std::string& ranks) {
          return StrCat(s.who, " waited ", options_.timeout_seconds, " s for rank(s) ", ranks,
                        " to join; check that every rank was started with the same ",
                        options_.names.rendezvous, ", ", options_.names.run_id, " and ",
                        options_.names.world_size, " ", TimeoutHint(options_));
        });
    StopIfAPeerWasRefused();  // a stale key let the wait pass without a poll
  });
}

void GlooCommunicator::ConnectMesh() {
  State& s = *state_;
  try {
    gloo::transport::tcp::attr attr;
    attr.hostname = s.host;
    s.device = gloo::transport::tcp::CreateDevice(attr);
  } catch (const std::exception& e) {
    throw CommError(StrCat(s.who, ": cannot listen on host '", s.host, "': ", e.what()));
  }
  try {
    s.context = std::make_shared<gloo::rendezvous::Context>(options_.rank, options_.world_size);
    s.context->setTimeout(s.timeout);
    s.context->connectFullMesh(*s.mesh_store, s.device);
  } catch (const CommError&) {
    throw;  // a peer was refused: the reason says it all
  } catch (const std::exception& e) {
    throw CommError(StrCat(s.who, ": connecting to the other ranks failed: ", e.what(),
                           "; a peer may have exited, or its ", options_.names.host,
                           " may not be reachable from here ", TimeoutHint(options_)));
  }
}

void GlooCommunicator::WaitUntilEveryRankIsConnected() {
  // A rank's side of the mesh can be complete while a peer is still
  // handshaking; returning (and maybe exiting) then would close the peer's
  // half-made pair under it. So every rank waits until all are connected.
  State& s = *state_;
  WithStore(s.who, [&] {
    std::string addresses;
    for (int peer = 0; peer < options_.world_size; ++peer) {
      if (peer == options_.rank) continue;
      addresses += StrCat(peer, "=", s.context->getPair(peer)->address().str(), "\n");
    }
    s.store->set(AddressesKey(options_.rank),
                 std::vector<char>(addresses.begin(), addresses.end()));
    s.store->set(ConnectedKey(options_.rank), std::vector<char>{1});
    WaitForEveryRank(*s.store, "connected/", options_.world_size, s.timeout,
                     [&](const std::string& ranks) {
                       return StrCat(s.who, " waited ", options_.timeout_seconds, " s for rank(s) ",
                                     ranks, " to finish connecting ", TimeoutHint(options_));
                     });
    // Every rank set its addresses before its "connected" key.
    const std::string mine = StrCat(options_.rank, "=");
    for (int peer = 0; peer < options_.world_size; ++peer) {
      if (peer == options_.rank) continue;
      const std::vector<char> value = s.store->get(AddressesKey(peer));
      std::istringstream lines(std::string(value.begin(), value.end()));
      for (std::string line; std::getline(lines, line);) {
        if (line.rfind(mine, 0) == 0) s.peer_ranks[line.substr(mine.size())] = peer;
      }
    }
  });
}

std::string GlooCommunicator::NamePeers(const std::string& text) const {
  std::string named;
  for (const auto& [address, peer] : state_->peer_ranks) {
    if (text.find(address) == std::string::npos) continue;
    named += StrCat(named.empty() ? " (" : ", ", address, " is rank ", peer);
  }
  if (!named.empty()) return named + ")";
  // Gloo may print the peer's end of an accepted connection, whose port is
  // not the one the peer published: name the ranks on the host it shows.
  std::string host_named;
  std::set<int> on_host;
  for (const auto& [address, peer] : state_->peer_ranks) {
    const std::string host = address.substr(0, address.rfind(':') + 1);  // "[10.0.0.2]:"
    if (host.empty() || text.find(host) == std::string::npos) continue;
    host_named = host.substr(0, host.size() - 1);
    on_host.insert(peer);
  }
  if (on_host.empty()) return "";
  std::string ranks;
  for (int peer : on_host) {
    ranks += StrCat(ranks.empty() ? "" : peer == *on_host.rbegin() ? " or " : ", ", peer);
  }
  return StrCat(" (", host_named, " is rank ", ranks, ")");
}

GlooCommunicator::~GlooCommunicator() = default;

template <typename Op>
void GlooCommunicator::Run(const std::string& what, Op op) {
  const std::string who =
      StrCat("gloo ", what, " on rank ", options_.rank, " of ", options_.world_size);
  if (broken_) throw CommError(StrCat(who, ": an earlier collective failed"));
  std::string detail;
  try {
    op();
    return;
  } catch (const std::exception& e) {  // gloo::Exception, EnforceNotMet, std::*
    detail = e.what();
  } catch (...) {
    detail = "unknown exception";
  }
  broken_ = true;
  throw CommError(StrCat(who, " failed: ", detail, NamePeers(detail),
                         "; a peer may have exited or stopped responding (timeout ",
                         options_.timeout_seconds, " s: ", options_.names.timeout,
                         "; the others wait while rank 0 alone tests or snapshots, so the timeout "
                         "must outlast its longest test)"));
}

void GlooCommunicator::AllReduceSum(float* data, size_t count) {
  if (broken_ || (count > 0 && size() > 1)) {
    Run(StrCat("AllReduceSum of ", count, " floats"), [&] {
      gloo::AllreduceOptions opts(state_->context);
      opts.setAlgorithm(gloo::AllreduceOptions::Algorithm::RING);
      opts.setOutput(data, count);
      void (*sum)(void*, const void*, const void*, size_t) = &gloo::sum<float>;
      opts.setReduceFunction(sum);
      gloo::allreduce(opts);
    });
  }
}

void GlooCommunicator::Broadcast(void* data, size_t bytes, int root) {
  DEMI_CHECK(root >= 0 && root < size(), "gloo Broadcast: root ", root, " is outside [0, ", size(),
             ")");
  if (broken_ || (bytes > 0 && size() > 1)) {
    Run(StrCat("Broadcast of ", bytes, " bytes from rank ", root), [&] {
      gloo::BroadcastOptions opts(state_->context);
      opts.setOutput(static_cast<uint8_t*>(data), bytes);
      opts.setRoot(root);
      gloo::broadcast(opts);
    });
  }
}

void GlooCommunicator::Barrier() {
  if (broken_ || size() > 1) {
    Run("Barrier", [&] {
      gloo::BarrierOptions opts(state_->context);
      gloo::barrier(opts);
    });
  }
}

void GlooCommunicator::StoreSet(const std::string& key, const std::string& value) {
  try {
    state_->store->set("user/" + key, std::vector<char>(value.begin(), value.end()));
  } catch (const std::exception& e) {
    throw CommError(StrCat("gloo store through ", state_->where, ": rank ", rank(),
                           " could not set key '", key,
                           "' (each key may be set once per run): ", e.what()));
  }
}

std::string GlooCommunicator::StoreGet(const std::string& key) {
  const std::string who =
      StrCat("gloo store through ", state_->where, ": rank ", rank(), " of ", size());
  std::vector<char> value;
  try {
    if (!state_->store->WaitFor({"user/" + key}, state_->timeout).empty()) {
      throw CommError(StrCat(who, " waited ", options_.timeout_seconds, " s for key '", key,
                             "'; the rank that sets it may have exited ", TimeoutHint(options_)));
    }
    value = state_->store->get("user/" + key);
  } catch (const CommError&) {
    throw;
  } catch (const std::exception& e) {
    throw CommError(StrCat(who, " could not read key '", key, "': ", e.what()));
  }
  return std::string(value.begin(), value.end());
}

}  // namespace demi
