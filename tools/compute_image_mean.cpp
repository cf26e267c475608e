// Computes the mean image of an LMDB of Datum and writes it as a binaryproto:
//   build/tools/compute_image_mean train_lmdb mean.binaryproto
#include <gflags/gflags.h>

#include "demi/data/convert.hpp"
#include "demi/data/db.hpp"
#include "demi/util/cli.hpp"
#include "demi/util/io.hpp"

DEFINE_string(backend, "lmdb", "The database to read: lmdb (the only one supported).");

int main(int argc, char** argv) {
  return demi::RunToolWithArgs(
      argc, argv,
      "Computes the mean image of an LMDB of Datum.\n"
      "Usage: compute_image_mean [FLAGS] INPUT_DB [OUTPUT_FILE]",
      [](const std::vector<std::string>& args) {
        DEMI_CHECK(args.size() == 1 || args.size() == 2,
                   "compute_image_mean takes INPUT_DB [OUTPUT_FILE], got ", args.size(),
                   " argument(s); see --help");
        demi::CheckLmdbBackend(FLAGS_backend);
        std::vector<double> channel_means;
        const demi::BlobProto mean = demi::ComputeImageMean(args[0], &channel_means);
        if (args.size() == 2) {
          demi::WriteProtoToBinaryFile(mean, args[1]);
          LOG(INFO) << "Wrote the mean image to " << args[1];
        }
        for (size_t c = 0; c < channel_means.size(); ++c) {
          LOG(INFO) << "mean_value channel [" << c << "]: " << channel_means[c];
        }
        return 0;
      });
}
