#include "demi/util/stream_marker.hpp"

#include "demi/common.hpp"

#ifndef CPU_ONLY
#include "demi/util/cuda.hpp"
#endif

namespace demi {

#ifdef CPU_ONLY

StreamMarker::StreamMarker() {
  ThrowError("a stream marker needs CUDA, and this build of Demitasse is CPU_ONLY");
}
StreamMarker::~StreamMarker() = default;
void StreamMarker::Record() {}
void StreamMarker::Wait() const {}
void StreamMarker::MakeStreamWait() const {}
void StreamMarker::WaitUnlessShutDown() const noexcept {}

#else

StreamMarker::StreamMarker() {
  cudaEvent_t event;
  DEMI_CUDA_CHECK(cudaEventCreateWithFlags(&event, cudaEventDisableTiming));
  event_ = event;
}

StreamMarker::~StreamMarker() { cudaEventDestroy(static_cast<cudaEvent_t>(event_)); }

void StreamMarker::Record() {
  DEMI_CUDA_CHECK(cudaEventRecord(static_cast<cudaEvent_t>(event_), CudaStream()));
}

void StreamMarker::Wait() const {
  DEMI_CUDA_CHECK(cudaEventSynchronize(static_cast<cudaEvent_t>(event_)));
}

void StreamMarker::MakeStreamWait() const {
  DEMI_CUDA_CHECK(cudaStreamWaitEvent(CudaStream(), static_cast<cudaEvent_t>(event_), 0));
}

void StreamMarker::WaitUnlessShutDown() const noexcept {
  // cudaErrorCudartUnloading and the like: the device's work is gone too.
  static_cast<void>(cudaEventSynchronize(static_cast<cudaEvent_t>(event_)));
}

#endif  // CPU_ONLY

}  // namespace demi
