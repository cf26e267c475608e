// Converts the images of a list file of "path label" lines into an LMDB of
// Datum, with Caffe's flags:
//   build/tools/convert_imageset --resize_height=256 --resize_width=256 --shuffle
//       /data/images/ train.txt train_lmdb
#include <gflags/gflags.h>

#include "demi/data/convert.hpp"
#include "demi/data/db.hpp"
#include "demi/util/cli.hpp"

DEFINE_bool(gray, false, "Read the images as grayscale (1 channel).");
DEFINE_bool(shuffle, false, "Shuffle the order of the images.");
DEFINE_int32(shuffle_seed, 1701, "Seed of the --shuffle order.");
DEFINE_string(backend, "lmdb", "The database to write: lmdb (the only one supported).");
DEFINE_int32(resize_width, 0, "Resize every image to this width (with --resize_height).");
DEFINE_int32(resize_height, 0, "Resize every image to this height (with --resize_width).");
DEFINE_bool(check_size, false, "Check that every image has the size of the first.");
DEFINE_bool(encoded, false, "Store the images encoded (JPEG, PNG, ...) instead of raw pixels.");
DEFINE_string(encode_type, "",
              "The encoding to store (jpg, png, ...); with --encoded and none, each file's own.");
DEFINE_bool(skip_bad_records, false,
            "Skip (and count) images that are missing or do not decode, instead of failing.");

int main(int argc, char** argv) {
  return demi::RunToolWithArgs(
      argc, argv,
      "Converts a set of images to an LMDB of Datum.\n"
      "Usage: convert_imageset [FLAGS] ROOTFOLDER/ LISTFILE DB_NAME\n"
      "LISTFILE holds lines \"subfolder1/file1.JPEG 7\"; ROOTFOLDER is prefixed to each path.",
      [](const std::vector<std::string>& args) {
        DEMI_CHECK(args.size() == 3, "convert_imageset takes ROOTFOLDER/ LISTFILE DB_NAME, got ",
                   args.size(), " argument(s); see --help");
        demi::CheckLmdbBackend(FLAGS_backend);
        demi::ImageSetOptions options;
        options.gray = FLAGS_gray;
        options.shuffle = FLAGS_shuffle;
        options.shuffle_seed = static_cast<uint32_t>(FLAGS_shuffle_seed);
        options.resize_height = FLAGS_resize_height;
        options.resize_width = FLAGS_resize_width;
        options.check_size = FLAGS_check_size;
        options.encoded = FLAGS_encoded;
        options.encode_type = FLAGS_encode_type;
        options.skip_bad = FLAGS_skip_bad_records;
        const demi::ConvertStats stats = demi::ConvertImageSet(args[0], args[1], args[2], options);
        if (stats.skipped > 0) {
          LOG(WARNING) << "Skipped " << stats.skipped << " image(s) that could not be read";
        }
        return 0;
      });
}
