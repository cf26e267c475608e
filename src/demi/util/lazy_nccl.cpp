// The NCCL functions Demitasse calls, loaded from libnccl on first use (see
// util/cuda_libraries.hpp). Built with USE_NCCL only.
#ifdef USE_NCCL

#include <nccl.h>

#include "demi/util/cuda_libraries.hpp"

namespace {

const demi::LazyLibrary kNccl = {
    "NCCL", "libnccl.so." DEMI_LAZY_STRING(NCCL_MAJOR), "replication across GPUs",
    "NCCL " DEMI_LAZY_STRING(NCCL_MAJOR) ": NVIDIA's package libnccl" DEMI_LAZY_STRING(NCCL_MAJOR)};

}  // namespace

// clang-format off
DEMI_LAZY_FUNCTION(kNccl, const char*, ncclGetErrorString, (ncclResult_t result), (result))
DEMI_LAZY_FUNCTION(kNccl, ncclResult_t, ncclGetUniqueId, (ncclUniqueId* id), (id))
DEMI_LAZY_FUNCTION(kNccl, ncclResult_t, ncclCommInitRankConfig,
                   (ncclComm_t* comm, int nranks, ncclUniqueId id, int rank,
                    ncclConfig_t* config),
                   (comm, nranks, id, rank, config))
DEMI_LAZY_FUNCTION(kNccl, ncclResult_t, ncclCommGetAsyncError,
                   (ncclComm_t comm, ncclResult_t* error), (comm, error))
DEMI_LAZY_FUNCTION(kNccl, ncclResult_t, ncclCommFinalize, (ncclComm_t comm), (comm))
DEMI_LAZY_FUNCTION(kNccl, ncclResult_t, ncclCommDestroy, (ncclComm_t comm), (comm))
DEMI_LAZY_FUNCTION(kNccl, ncclResult_t, ncclCommAbort, (ncclComm_t comm), (comm))
DEMI_LAZY_FUNCTION(kNccl, ncclResult_t, ncclGroupStart, (), ())
DEMI_LAZY_FUNCTION(kNccl, ncclResult_t, ncclGroupEnd, (), ())
DEMI_LAZY_FUNCTION(kNccl, ncclResult_t, ncclAllReduce,
                   (const void* send, void* recv, size_t count, ncclDataType_t type,
                    ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream),
                   (send, recv, count, type, op, comm, stream))
DEMI_LAZY_FUNCTION(kNccl, ncclResult_t, ncclBroadcast,
                   (const void* send, void* recv, size_t count, ncclDataType_t type, int root,
                    ncclComm_t comm, cudaStream_t stream),
                   (send, recv, count, type, root, comm, stream))
// clang-format on

#endif  // USE_NCCL
