#include "demi/parallel/communicator.hpp"

namespace demi {

namespace {

[[noreturn]] void NoQueue(const Communicator& comm) {
  ThrowError(StrCat("the ", comm.backend(), " communicator does not queue collectives"));
}

}  // namespace

void Communicator::QueueAllReduceSum(float*, size_t) { NoQueue(*this); }
void Communicator::JoinQueued() { NoQueue(*this); }
void Communicator::WaitQueued() { NoQueue(*this); }

}  // namespace demi
