#include "demi/parallel/fingerprint.hpp"

#include <algorithm>
#include <cstdint>
#include <exception>
#include <utility>

namespace demi {

namespace {

/// Values in messages are cut to this many characters (a layer's settings
/// can be long).
constexpr size_t kShownChars = 160;

std::string Shown(const std::string& value) {
  if (value.size() <= kShownChars) return value;
  return value.substr(0, kShownChars) + "...";
}

/// FNV-1a: equal bytes hash equal on every host (std::hash need not).
uint64_t Hash(const std::string& bytes) {
  uint64_t hash = 14695981039346656037ull;
  for (unsigned char c : bytes) {
    hash ^= c;
    hash *= 1099511628211ull;
  }
  return hash;
}

void AppendString(const std::string& text, std::string* out) {
  *out += std::to_string(text.size());
  *out += ':';
  *out += text;
}

/// Reads one AppendString'd string at `*pos`; false when the bytes end or are
/// malformed.
bool ReadString(const std::string& bytes, size_t* pos, std::string* text) {
  const size_t colon = bytes.find(':', *pos);
  if (colon == std::string::npos || colon == *pos || colon - *pos > 19) return false;
  uint64_t length = 0;
  for (size_t i = *pos; i < colon; ++i) {
    if (bytes[i] < '0' || bytes[i] > '9') return false;
    length = length * 10 + static_cast<uint64_t>(bytes[i] - '0');
  }
  if (length > bytes.size() - colon - 1) return false;
  *text = bytes.substr(colon + 1, length);
  *pos = colon + 1 + length;
  return true;
}

/// Member `root`'s bytes, on every member: the length first, so that every
/// member posts a Broadcast of the same size.
std::string BroadcastBytes(Communicator* comm, const std::string& mine, int root) {
  uint64_t length = mine.size();
  comm->Broadcast(&length, sizeof(length), root);
  std::string bytes = comm->rank() == root ? mine : std::string(length, '\0');
  comm->Broadcast(&bytes[0], bytes.size(), root);
  return bytes;
}

}  // namespace

std::string FirstDifference(const Fingerprint& reference, const Fingerprint& other) {
  const size_t common = std::min(reference.size(), other.size());
  for (size_t i = 0; i < common; ++i) {
    const FingerprintField& a = reference[i];
    const FingerprintField& b = other[i];
    if (a.name != b.name) return StrCat(a.name, " (", Shown(a.value), " vs absent)");
    if (a.value != b.value)
      return StrCat(a.name, " (", Shown(a.value), " vs ", Shown(b.value), ")");
  }
  if (reference.size() > common) {
    return StrCat(reference[common].name, " (", Shown(reference[common].value), " vs absent)");
  }
  if (other.size() > common) {
    return StrCat(other[common].name, " (absent vs ", Shown(other[common].value), ")");
  }
  return "";
}

std::string SerializeFingerprint(const Fingerprint& fingerprint) {
  std::string out;
  for (const FingerprintField& field : fingerprint) {
    AppendString(field.name, &out);
    AppendString(field.value, &out);
  }
  return out;
}

Fingerprint ParseFingerprint(const std::string& bytes) {
  Fingerprint fingerprint;
  size_t pos = 0;
  while (pos < bytes.size()) {
    FingerprintField field;
    DEMI_CHECK(ReadString(bytes, &pos, &field.name) && ReadString(bytes, &pos, &field.value),
               "fingerprint: malformed bytes at offset ", pos, " of ", bytes.size());
    fingerprint.push_back(std::move(field));
  }
  return fingerprint;
}

void AgreeOnFingerprint(Communicator* comm, const Fingerprint& mine, const std::string& member,
                        const std::string& hint) {
  if (comm->size() == 1) return;
  const std::string bytes = SerializeFingerprint(mine);
  const uint64_t my_hash = Hash(bytes);
  uint64_t reference_hash = my_hash;
  comm->Broadcast(&reference_hash, sizeof(reference_hash), 0);
  // One vote slot per member: which ones differ from member 0.
  std::vector<float> differs(comm->size(), 0.0f);
  differs[comm->rank()] = my_hash == reference_hash ? 0.0f : 1.0f;
  comm->AllReduceSum(differs.data(), differs.size());
  int dissenter = -1;
  for (int r = 0; r < comm->size() && dissenter < 0; ++r) {
    if (differs[r] > 0) dissenter = r;
  }
  if (dissenter < 0) return;
  const Fingerprint reference = ParseFingerprint(BroadcastBytes(comm, bytes, 0));
  const Fingerprint other = ParseFingerprint(BroadcastBytes(comm, bytes, dissenter));
  // Different hashes mean different bytes, and the serialization is one to
  // one, so the lists differ somewhere.
  const std::string difference = FirstDifference(reference, other);
  // Every member has read both lists before any leaves: one that exited at
  // once could close a connection another still reads from.
  try {
    comm->Barrier();
  } catch (const std::exception&) {
    // The mismatch is the news; a peer already gone changes nothing.
  }
  throw FingerprintMismatch(StrCat(member, " ", dissenter, " disagrees with ", member, " 0 on ",
                                   difference, hint.empty() ? "" : "; ", hint));
}

}  // namespace demi
