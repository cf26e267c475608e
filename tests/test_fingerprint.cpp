// Fingerprints: the first field that differs, the byte form, and the
// exchange over a communicator (threads standing in for ranks).
#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <thread>
#include <vector>

#include "demi/parallel/fingerprint.hpp"
#include "demi/parallel/thread_communicator.hpp"

namespace demi {
namespace {

const Fingerprint kReference = {
    {"build", "g++ 12"}, {"solver.max_iter", "100"}, {"net layer 'relu1' type", "ReLU"}};

TEST(FingerprintTest, EqualListsHaveNoDifference) {
  EXPECT_EQ(FirstDifference(kReference, kReference), "");
  EXPECT_EQ(FirstDifference({}, {}), "");
}

TEST(FingerprintTest, NamesTheFirstFieldThatDiffersWithBothValues) {
  Fingerprint other = kReference;
  other[1].value = "200";
  other[2].value = "Sigmoid";
  EXPECT_EQ(FirstDifference(kReference, other), "solver.max_iter (100 vs 200)");
  other[1].value = "100";
  EXPECT_EQ(FirstDifference(kReference, other), "net layer 'relu1' type (ReLU vs Sigmoid)");
}

TEST(FingerprintTest, AFieldOneListLacksReadsAbsent) {
  Fingerprint shorter(kReference.begin(), kReference.end() - 1);
  EXPECT_EQ(FirstDifference(kReference, shorter), "net layer 'relu1' type (ReLU vs absent)");
  EXPECT_EQ(FirstDifference(shorter, kReference), "net layer 'relu1' type (absent vs ReLU)");
  Fingerprint renamed = kReference;
  renamed[1].name = "solver.iter_size";
  EXPECT_EQ(FirstDifference(kReference, renamed), "solver.max_iter (100 vs absent)");
}

TEST(FingerprintTest, LongValuesAreCutInTheMessage) {
  Fingerprint a = {{"net layer 'conv1' convolution_param", std::string(500, 'a')}};
  Fingerprint b = {{"net layer 'conv1' convolution_param", std::string(500, 'b')}};
  const std::string difference = FirstDifference(a, b);
  EXPECT_LT(difference.size(), 400u);
  EXPECT_NE(difference.find("aaa... vs bbb"), std::string::npos) << difference;
  EXPECT_EQ(difference.substr(difference.size() - 8), "bbbb...)") << difference;
}

TEST(FingerprintTest, BytesRoundTripAnyCharacters) {
  const Fingerprint odd = {{"", ""}, {"a:b", std::string("1\0:2", 4)}, {"12:", "\n"}};
  for (const Fingerprint& fingerprint : {kReference, odd, Fingerprint{}}) {
    const Fingerprint parsed = ParseFingerprint(SerializeFingerprint(fingerprint));
    ASSERT_EQ(parsed.size(), fingerprint.size());
    for (size_t i = 0; i < parsed.size(); ++i) {
      EXPECT_EQ(parsed[i].name, fingerprint[i].name);
      EXPECT_EQ(parsed[i].value, fingerprint[i].value);
    }
  }
  // The same lists cut differently give different bytes.
  EXPECT_NE(SerializeFingerprint({{"ab", "c"}}), SerializeFingerprint({{"a", "bc"}}));
}

TEST(FingerprintTest, MalformedBytesAreRefused) {
  const std::string good = SerializeFingerprint(kReference);
  for (const std::string& bad : {good.substr(0, good.size() - 1), std::string("x:1:a"),
                                 std::string("5:ab"), std::string("3:abc")}) {
    EXPECT_THROW(ParseFingerprint(bad), Error) << bad;
  }
}

/// Runs AgreeOnFingerprint on one thread per fingerprint; returns each
/// member's error message ("" when it returned).
std::vector<std::string> Agree(const std::vector<Fingerprint>& fingerprints) {
  const int members = static_cast<int>(fingerprints.size());
  auto group = std::make_shared<ThreadGroup>(members, std::chrono::milliseconds(10000));
  std::vector<std::string> errors(members);
  std::vector<std::thread> threads;
  for (int rank = 0; rank < members; ++rank) {
    threads.emplace_back([&, rank] {
      ThreadCommunicator comm(group, rank);
      try {
        AgreeOnFingerprint(&comm, fingerprints[rank], "rank", "start them alike");
      } catch (const FingerprintMismatch& e) {
        errors[rank] = e.what();
      }
    });
  }
  for (auto& thread : threads) thread.join();
  return errors;
}

TEST(FingerprintTest, MembersThatAgreeAllReturn) {
  for (const std::string& error : Agree({kReference, kReference, kReference})) {
    EXPECT_EQ(error, "");
  }
}

TEST(FingerprintTest, EveryMemberNamesTheFirstDissenterAndItsFirstDifference) {
  Fingerprint max_iter = kReference;
  max_iter[1].value = "200";
  Fingerprint longer = kReference;
  longer.push_back({"net layer 'ip2' type", "InnerProduct"});
  // Members 2 and 3 disagree; member 2 is named, with a longer list than 0.
  const std::vector<std::string> errors = Agree({kReference, kReference, longer, max_iter});
  for (const std::string& error : errors) {
    EXPECT_EQ(error,
              "rank 2 disagrees with rank 0 on net layer 'ip2' type (absent vs InnerProduct); "
              "start them alike");
  }
  for (const std::string& error : Agree({kReference, max_iter})) {
    EXPECT_EQ(error,
              "rank 1 disagrees with rank 0 on solver.max_iter (100 vs 200); start them alike");
  }
}

}  // namespace
}  // namespace demi
