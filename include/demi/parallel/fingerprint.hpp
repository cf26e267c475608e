#ifndef DEMI_PARALLEL_FINGERPRINT_HPP_
#define DEMI_PARALLEL_FINGERPRINT_HPP_

#include <string>
#include <vector>

#include "demi/common.hpp"
#include "demi/parallel/communicator.hpp"

namespace demi {

/// One thing every member of a group must agree on, e.g.
/// {"solver.max_iter", "100"} or {"net layer 'relu1' type", "ReLU"}.
struct FingerprintField {
  std::string name;
  std::string value;
};

/// @brief What a member brings to a group, as an ordered list of named
/// fields; members agree when their lists are equal. The order is the order
/// of reporting: the first field that differs is the one named.
using Fingerprint = std::vector<FingerprintField>;

/// The first difference between a reference (member 0's) and another
/// member's fingerprint, as "name (reference value vs other value)"; a field
/// that one list lacks at that position reads "absent". "" when equal.
std::string FirstDifference(const Fingerprint& reference, const Fingerprint& other);

/// Length-prefixed bytes, so that names and values may hold any character.
std::string SerializeFingerprint(const Fingerprint& fingerprint);
/// Inverse of SerializeFingerprint; throws Error on malformed bytes.
Fingerprint ParseFingerprint(const std::string& bytes);

/// Ranks (or replicas) that disagree on their fingerprints.
class FingerprintMismatch : public Error {
 public:
  using Error::Error;
};

/// Every member of `comm` calls it with its own fingerprint, at the same
/// point. Returns when all are equal to member 0's; otherwise every member
/// throws the same FingerprintMismatch: "<member> r disagrees with <member>
/// 0 on <FirstDifference>" for the lowest such r, followed by `hint`.
///
/// Costs one 8-byte Broadcast (member 0's hash) and an AllReduceSum of one
/// float per member when all agree. Only when some differ are the lists
/// exchanged (member 0's and the first dissenter's, each length first), so
/// members never post collectives of different sizes.
void AgreeOnFingerprint(Communicator* comm, const Fingerprint& mine, const std::string& member,
                        const std::string& hint);

}  // namespace demi

#endif  // DEMI_PARALLEL_FINGERPRINT_HPP_
