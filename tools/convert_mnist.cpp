// Converts MNIST-format IDX image and label files (gzipped or not) into an
// LMDB of raw 1 x rows x cols Datum, keyed %08d:
//   build/tools/convert_mnist train-images-idx3-ubyte.gz train-labels-idx1-ubyte.gz train_lmdb
#include <gflags/gflags.h>

#include "demi/data/convert.hpp"
#include "demi/data/db.hpp"
#include "demi/util/cli.hpp"

DEFINE_string(backend, "lmdb", "The database to write: lmdb (the only one supported).");

int main(int argc, char** argv) {
  return demi::RunToolWithArgs(
      argc, argv,
      "Converts MNIST IDX files (gzipped or not) to an LMDB of Datum.\n"
      "Usage: convert_mnist [FLAGS] IMAGES_IDX LABELS_IDX DB_PATH",
      [](const std::vector<std::string>& args) {
        DEMI_CHECK(args.size() == 3, "convert_mnist takes IMAGES_IDX LABELS_IDX DB_PATH, got ",
                   args.size(), " argument(s); see --help");
        demi::CheckLmdbBackend(FLAGS_backend);
        demi::ConvertMnist(args[0], args[1], args[2]);
        return 0;
      });
}
