#include "demi/util/io.hpp"

#include <fcntl.h>
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/tokenizer.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <google/protobuf/text_format.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "demi/common.hpp"
#include "demi/util/temporary_files.hpp"

namespace demi {

namespace {

/// Keeps the first parse error with its position.
class FirstErrorCollector : public google::protobuf::io::ErrorCollector {
 public:
  void AddError(int line, google::protobuf::io::ColumnNumber column,
                const std::string& message) override {
    if (!has_error_) {
      has_error_ = true;
      line_ = line + 1;
      column_ = column + 1;
      message_ = message;
    }
  }
  void AddWarning(int, google::protobuf::io::ColumnNumber, const std::string&) override {}

  bool has_error_ = false;
  int line_ = 0;
  int column_ = 0;
  std::string message_;
};

std::string ErrnoText() { return std::strerror(errno); }

}  // namespace

std::string ReadFileToString(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  DEMI_CHECK(in.good(), "cannot open file '", path, "': ", ErrnoText());
  std::ostringstream contents;
  contents << in.rdbuf();
  DEMI_CHECK(!in.bad(), "error reading file '", path, "'");
  return contents.str();
}

void ParseProtoText(const std::string& text, const std::string& source,
                    google::protobuf::Message* proto) {
  google::protobuf::TextFormat::Parser parser;
  FirstErrorCollector errors;
  parser.RecordErrorsTo(&errors);
  if (!parser.ParseFromString(text, proto)) {
    DEMI_CHECK(!errors.has_error_, source, ":", errors.line_, ":", errors.column_, ": ",
               errors.message_);
    ThrowError(StrCat(source, ": cannot parse as ", proto->GetTypeName()));
  }
}

void ReadProtoFromTextFile(const std::string& path, google::protobuf::Message* proto) {
  ParseProtoText(ReadFileToString(path), path, proto);
}

void ReadProtoFromBinaryFile(const std::string& path, google::protobuf::Message* proto) {
  const std::string bytes = ReadFileToString(path);
  google::protobuf::io::ArrayInputStream raw(bytes.data(), static_cast<int>(bytes.size()));
  google::protobuf::io::CodedInputStream coded(&raw);
  coded.SetTotalBytesLimit(INT_MAX);
  DEMI_CHECK(proto->ParseFromCodedStream(&coded) && coded.ConsumedEntireMessage(), "file '", path,
             "' is not a valid binary ", proto->GetTypeName(), " (", bytes.size(), " bytes)");
}

void CheckCanCreateFile(const std::string& path) {
  namespace fs = std::filesystem;
  const fs::path parent = fs::path(path).parent_path();
  const std::string dir = parent.empty() ? "." : parent.string();
  std::error_code error;
  const fs::file_status status = fs::status(dir, error);
  DEMI_CHECK(fs::exists(status), "cannot write '", path, "': the directory '", dir,
             "' does not exist");
  DEMI_CHECK(fs::is_directory(status), "cannot write '", path, "': '", dir, "' is not a directory");
  DEMI_CHECK(::access(dir.c_str(), W_OK | X_OK) == 0, "cannot write '", path, "': the directory '",
             dir, "' is not writable (", ErrnoText(), ")");
}

void WriteFileAtomically(const std::string& path, const std::string& contents) {
  const std::string temp = TemporaryPathFor(path);
  int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) {
    const std::string reason = ErrnoText();
    CheckCanCreateFile(path);  // names the directory when it is the cause
    ThrowError(StrCat("cannot write '", path, "': cannot create '", temp, "': ", reason));
  }
  size_t written = 0;
  while (written < contents.size()) {
    ssize_t n = ::write(fd, contents.data() + written, contents.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      std::string reason = ErrnoText();
      ::close(fd);
      ::unlink(temp.c_str());
      // EFBIG (over `ulimit -f`; tools ignore SIGXFSZ to see it), ENOSPC, EIO.
      ThrowError(StrCat("cannot write '", path, "': ", reason));
    }
    written += static_cast<size_t>(n);
  }
  // The data must be on disk before the rename makes it the file of record.
  const bool synced = ::fsync(fd) == 0;
  const bool closed = ::close(fd) == 0;
  if (!synced || !closed || std::rename(temp.c_str(), path.c_str()) != 0) {
    std::string reason = ErrnoText();
    ::unlink(temp.c_str());
    ThrowError(StrCat("cannot write '", path, "': ", reason));
  }
}

void WriteProtoToTextFile(const google::protobuf::Message& proto, const std::string& path) {
  std::string text;
  CHECK(google::protobuf::TextFormat::PrintToString(proto, &text));
  WriteFileAtomically(path, text);
}

void WriteProtoToBinaryFile(const google::protobuf::Message& proto, const std::string& path) {
  std::string bytes;
  // Protobuf refuses a message of 2 GiB or more.
  DEMI_CHECK(proto.SerializeToString(&bytes), "cannot write '", path, "': its ",
             proto.GetTypeName(), " is ", proto.ByteSizeLong(),
             " bytes, past protobuf's 2 GiB limit for one message, so no Caffe file can hold it: "
             "make the model smaller");
  WriteFileAtomically(path, bytes);
}

}  // namespace demi
