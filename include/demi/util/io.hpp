#ifndef DEMI_UTIL_IO_HPP_
#define DEMI_UTIL_IO_HPP_

#include <google/protobuf/message.h>

#include <string>

namespace demi {

/// Parses protobuf text. A syntax error throws an Error of the form
/// "<source>:<line>:<column>: <message>" (1-based line and column).
void ParseProtoText(const std::string& text, const std::string& source,
                    google::protobuf::Message* proto);
void ReadProtoFromTextFile(const std::string& path, google::protobuf::Message* proto);
/// Reads a binary proto of any size Caffe writes (up to 2 GiB).
void ReadProtoFromBinaryFile(const std::string& path, google::protobuf::Message* proto);

/// Writes to `path` through a temporary file in the same directory and an
/// atomic rename, so an interrupted write never leaves a truncated file.
void WriteProtoToTextFile(const google::protobuf::Message& proto, const std::string& path);
void WriteProtoToBinaryFile(const google::protobuf::Message& proto, const std::string& path);
void WriteFileAtomically(const std::string& path, const std::string& contents);

/// Throws an Error naming `path` when no file can be created there: its
/// directory does not exist, is not a directory, or is not writable.
void CheckCanCreateFile(const std::string& path);

std::string ReadFileToString(const std::string& path);

}  // namespace demi

#endif  // DEMI_UTIL_IO_HPP_
