// `extract_features` (and `caffe extract_features`): runs a net for N
// batches and writes the named blobs, one LMDB of Datum per blob, as Caffe's
// tool does (Caffe's positional form, or flags):
//   extract_features net.caffemodel net.prototxt ip1,prob ip1_db,prob_db 10 lmdb [CPU|GPU] [ID]
//   extract_features --weights=net.caffemodel --model=net.prototxt --blobs=ip1,prob
//                    --dbs=ip1_db,prob_db --iterations=10 [--gpu=0]
// Record i of a blob's database (key "%010d" of i) is item i of the batches
// in order: a Datum of C = count / num floats (float_data), H = W = 1.
#include <algorithm>
#include <climits>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "demi/data/db.hpp"
#include "demi/data/staged_lmdb.hpp"
#include "demi/net.hpp"
#include "demi/tools/commands.hpp"
#include "demi/tools/common_flags.hpp"
#include "demi/util/cli.hpp"

DEFINE_string(blobs, "", "Comma-separated blobs to extract (extract_features).");
DEFINE_string(dbs, "",
              "Comma-separated LMDBs to write, one per blob of --blobs; none may exist yet.");

namespace demi {

namespace {

/// Records written per LMDB transaction, as Caffe commits.
constexpr size_t kRecordsPerCommit = 1000;

struct Extraction {
  std::string weights;
  std::string model;
  std::vector<std::string> blobs;
  std::vector<std::string> dbs;
  int batches = 0;
  Context context;
};

int ParseCount(const std::string& what, const std::string& text) {
  long value = 0;
  const size_t end = ReadNumber(text, &value);
  DEMI_CHECK(end == text.size() && end > 0 && value <= INT_MAX, what, ": '", text,
             "' is not a count");
  DEMI_CHECK(value >= 0, what, " is ", value, ": it cannot be negative");
  return static_cast<int>(value);
}

/// Caffe's form: WEIGHTS MODEL BLOBS DBS NUM_MINI_BATCHES lmdb [CPU|GPU] [DEVICE_ID].
Extraction FromArguments(const std::vector<std::string>& args) {
  DEMI_CHECK(args.size() >= 6 && args.size() <= 8,
             "extract_features takes PRETRAINED.caffemodel NET.prototxt BLOB1[,BLOB2...] "
             "DB1[,DB2...] NUM_MINI_BATCHES lmdb [CPU|GPU] [DEVICE_ID], or flags; got ",
             args.size(), " argument(s) (see --help)");
  Extraction extraction;
  extraction.weights = args[0];
  extraction.model = args[1];
  extraction.blobs = SplitList(args[2]);
  extraction.dbs = SplitList(args[3]);
  extraction.batches = ParseCount("NUM_MINI_BATCHES", args[4]);
  CheckLmdbBackend(args[5]);
  const std::string mode = args.size() > 6 ? args[6] : "CPU";
  DEMI_CHECK(mode == "CPU" || mode == "GPU", "extract_features: the mode is CPU or GPU, got '",
             mode, "'");
  if (mode == "GPU") {
    const int device = args.size() > 7 ? ParseCount("DEVICE_ID", args[7]) : 0;
    extraction.context = ToolContext(std::to_string(device));
  }
  return extraction;
}

Extraction FromFlags() {
  DEMI_CHECK(!FLAGS_weights.empty(), "--weights is required: the trained .caffemodel");
  DEMI_CHECK(!FLAGS_model.empty(), "--model is required: the net prototxt to run");
  Extraction extraction;
  extraction.weights = FLAGS_weights;
  extraction.model = FLAGS_model;
  extraction.blobs = SplitList(FLAGS_blobs);
  extraction.dbs = SplitList(FLAGS_dbs);
  extraction.batches = FLAGS_iterations;
  extraction.context = ToolContext();
  return extraction;
}

/// Each requested blob must be a top of the net as filtered for its state;
/// the error lists the tops there are.
void CheckBlobsExist(const NetParameter& param, const std::string& model,
                     const std::vector<std::string>& blobs) {
  NetParameter filtered;
  Net::FilterNet(param, &filtered);
  std::vector<std::string> tops;
  for (const LayerParameter& layer : filtered.layer()) {
    for (const std::string& top : layer.top()) {
      if (std::find(tops.begin(), tops.end(), top) == tops.end()) tops.push_back(top);
    }
  }
  for (const std::string& blob : blobs) {
    if (std::find(tops.begin(), tops.end(), blob) != tops.end()) continue;
    std::string known;
    for (const std::string& top : tops) known += (known.empty() ? "" : ", ") + top;
    ThrowError(StrCat(model, ": net '", filtered.name(), "' has no blob '", blob,
                      "'; its blobs: ", known));
  }
}

/// Appends one Datum per item of `blob`'s batch to `txn`, keyed from `*index`.
void AppendRecords(const Blob& blob, const std::string& name, LMDBTransaction* txn,
                   int64_t* index) {
  const int64_t num = blob.num_axes() > 0 ? blob.shape(0) : 1;
  const int64_t dim = num > 0 ? blob.count() / num : 0;
  DEMI_CHECK(dim > 0 && dim <= INT_MAX, "blob '", name, "' of shape ", blob.shape_string(),
             " cannot be stored as one Datum per item (", dim, " values each)");
  const float* values = blob.cpu_data();
  for (int64_t n = 0; n < num; ++n, ++*index) {
    Datum datum;
    datum.set_channels(static_cast<int>(dim));
    datum.set_height(1);
    datum.set_width(1);
    datum.mutable_float_data()->Add(values + n * dim, values + (n + 1) * dim);
    char key[32];
    std::snprintf(key, sizeof(key), "%010lld", static_cast<long long>(*index));
    txn->Put(key, datum.SerializeAsString());
  }
}

int ExtractFeatures(const std::vector<std::string>& args) {
  const Extraction job = args.empty() ? FromFlags() : FromArguments(args);
  DEMI_CHECK(!job.blobs.empty(), "name the blobs to extract (--blobs=ip1,prob)");
  DEMI_CHECK(job.blobs.size() == job.dbs.size(), "give one database per blob: ", job.blobs.size(),
             " blob(s) but ", job.dbs.size(), " database(s)");
  DEMI_CHECK(job.batches > 0, "the number of mini-batches must be positive, got ", job.batches);
  ApplyThreadsFlag(FLAGS_threads);
  NetParameter param = ReadTestNetParam(job.model);
  CheckBlobsExist(param, job.model, job.blobs);
  // Planned memory reuses an activation once read: the extracted blobs keep theirs.
  for (const std::string& blob : job.blobs) param.add_keep_blob(blob);
  Net net(param, job.context, nullptr, job.model);
  net.CopyTrainedLayersFrom(SplitList(job.weights));

  // Every database is staged before anything runs: one that exists fails
  // first, and a failure leaves none behind.
  std::vector<std::unique_ptr<StagedLMDB>> dbs;
  std::vector<std::unique_ptr<LMDBTransaction>> txns;
  for (const std::string& path : job.dbs) {
    dbs.push_back(std::make_unique<StagedLMDB>(path));
    txns.push_back(dbs.back()->db().NewTransaction());
  }
  std::vector<int64_t> written(job.blobs.size(), 0);
  LOG(INFO) << "Extracting features of " << job.batches << " mini-batch(es)";
  for (int batch = 0; batch < job.batches; ++batch) {
    net.Forward();
    for (size_t i = 0; i < job.blobs.size(); ++i) {
      AppendRecords(*net.blob_by_name(job.blobs[i]), job.blobs[i], txns[i].get(), &written[i]);
      if (txns[i]->size() >= kRecordsPerCommit) txns[i]->Commit();
    }
  }
  for (size_t i = 0; i < job.blobs.size(); ++i) {
    txns[i]->Commit();
    txns[i].reset();
    dbs[i]->Publish();
    LOG(INFO) << "Extracted features of " << written[i] << " query images for feature blob "
              << job.blobs[i] << " into " << job.dbs[i];
  }
  return 0;
}

}  // namespace

Command ExtractFeaturesCommand() {
  Command command = MakeCommand(
      "extract_features", "write named blobs of N batches to LMDBs of Datum",
      "PRETRAINED.caffemodel NET.prototxt BLOB1[,BLOB2...] DB1[,DB2...] NUM_MINI_BATCHES lmdb "
      "[CPU|GPU] [DEVICE_ID]\n or, with flags: --weights=net.caffemodel "
      "--model=net.prototxt --blobs=BLOB1[,...] --dbs=DB1[,...] [--iterations=N] [--gpu=0]",
      WithNetFlags({"weights", "model", "blobs", "dbs", "iterations"}), ExtractFeatures);
  command.takes_args = true;
  return command;
}

}  // namespace demi
