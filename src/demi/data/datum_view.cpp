#include "demi/data/datum_view.hpp"

#include <google/protobuf/io/coded_stream.h>

#include <cstdint>
#include <limits>

namespace demi {

namespace {

using google::protobuf::io::CodedInputStream;

constexpr uint32_t kDataField = Datum::kDataFieldNumber;

enum WireType : uint32_t { kVarint = 0, kFixed64 = 1, kLengthDelimited = 2, kFixed32 = 5 };

/// Where a record's data field lies: its tag's first byte, its payload's
/// first byte, and the byte after it. `count` data fields were seen.
struct DataField {
  int tag_begin = 0;
  int payload_begin = 0;
  int end = 0;
  int count = 0;
};

/// Walks a Datum's fields (Datum has no groups) to find its data field;
/// false where the bytes are not a well-formed message of such fields.
bool FindDataField(CodedInputStream* input, DataField* found) {
  for (;;) {
    const int tag_begin = input->CurrentPosition();
    const uint32_t tag = input->ReadTag();
    if (tag == 0) return input->ConsumedEntireMessage();
    uint64_t varint = 0;
    uint32_t length = 0;
    switch (tag & 7) {
      case kVarint:
        if (!input->ReadVarint64(&varint)) return false;
        break;
      case kFixed64:
        if (!input->Skip(8)) return false;
        break;
      case kFixed32:
        if (!input->Skip(4)) return false;
        break;
      case kLengthDelimited: {
        if (!input->ReadVarint32(&length)) return false;
        const int payload_begin = input->CurrentPosition();
        if (!input->Skip(static_cast<int>(length))) return false;
        if ((tag >> 3) == kDataField) {
          *found = {tag_begin, payload_begin, input->CurrentPosition(), found->count + 1};
        }
        break;
      }
      default:
        return false;
    }
  }
}

}  // namespace

bool ParseDatumInPlace(std::string_view serialized, Datum* fields, std::string_view* data) {
  if (serialized.size() > static_cast<size_t>(std::numeric_limits<int>::max())) return false;
  const auto* bytes = reinterpret_cast<const uint8_t*>(serialized.data());
  const auto size = static_cast<int>(serialized.size());
  DataField found;
  CodedInputStream scan(bytes, size);
  if (!FindDataField(&scan, &found)) return false;
  if (found.count != 1) {
    if (!fields->ParseFromArray(bytes, size)) return false;
    *data = fields->data();
    return true;
  }
  // The fields before the data field, then those after it.
  if (!fields->ParseFromArray(bytes, found.tag_begin)) return false;
  CodedInputStream rest(bytes + found.end, size - found.end);
  if (!fields->MergeFromCodedStream(&rest)) return false;
  *data = serialized.substr(found.payload_begin, found.end - found.payload_begin);
  return true;
}

}  // namespace demi
