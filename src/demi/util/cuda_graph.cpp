#include "demi/util/cuda_graph.hpp"

#ifndef CPU_ONLY

#include <utility>

#include "demi/common.hpp"
#include "demi/util/cuda.hpp"

namespace demi {

namespace {

cudaGraph_t AsGraph(void* graph) { return static_cast<cudaGraph_t>(graph); }
cudaGraphExec_t AsExec(void* exec) { return static_cast<cudaGraphExec_t>(exec); }

}  // namespace

CudaGraph::~CudaGraph() {
  if (capturing_) AbandonCapture();
  Reset();
}

CudaGraph::CudaGraph(CudaGraph&& other) noexcept
    : graph_(std::exchange(other.graph_, nullptr)),
      exec_(std::exchange(other.exec_, nullptr)),
      capturing_(std::exchange(other.capturing_, false)) {}

CudaGraph& CudaGraph::operator=(CudaGraph&& other) noexcept {
  if (this != &other) {
    Reset();
    graph_ = std::exchange(other.graph_, nullptr);
    exec_ = std::exchange(other.exec_, nullptr);
    capturing_ = std::exchange(other.capturing_, false);
  }
  return *this;
}

void CudaGraph::BeginCapture() {
  DEMI_CHECK(!capturing_ && !CapturingOnThisThread(), "a CUDA graph capture is already under way");
  Reset();
  DEMI_CUDA_CHECK(cudaStreamBeginCapture(CudaStream(), cudaStreamCaptureModeThreadLocal));
  capturing_ = true;
  SetCapturingOnThisThread(true);
}

std::string CudaGraph::CaptureProblem() const {
  if (!capturing_) return "no capture is under way";
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  const cudaError_t error = cudaStreamIsCapturing(CudaStream(), &status);
  if (error != cudaSuccess) {
    static_cast<void>(cudaGetLastError());
    return cudaGetErrorString(error);
  }
  if (status == cudaStreamCaptureStatusActive) return "";
  return status == cudaStreamCaptureStatusInvalidated ? "the capture was invalidated"
                                                      : "the stream stopped capturing";
}

void CudaGraph::EndCapture() {
  DEMI_CHECK(capturing_, "no CUDA graph capture to end");
  capturing_ = false;
  SetCapturingOnThisThread(false);
  cudaGraph_t graph = nullptr;
  const cudaError_t ended = cudaStreamEndCapture(CudaStream(), &graph);
  graph_ = graph;
  if (ended != cudaSuccess) {
    static_cast<void>(cudaGetLastError());
    Reset();
    ThrowError(StrCat("ending a CUDA graph capture: ", cudaGetErrorString(ended)));
  }
  cudaGraphExec_t exec = nullptr;
  const cudaError_t made = cudaGraphInstantiate(&exec, graph, 0);
  if (made != cudaSuccess) {
    static_cast<void>(cudaGetLastError());
    Reset();
    ThrowError(StrCat("instantiating a CUDA graph: ", cudaGetErrorString(made)));
  }
  exec_ = exec;
}

void CudaGraph::AbandonCapture() {
  if (!capturing_) return;
  capturing_ = false;
  SetCapturingOnThisThread(false);
  cudaGraph_t graph = nullptr;
  static_cast<void>(cudaStreamEndCapture(CudaStream(), &graph));
  if (graph != nullptr) static_cast<void>(cudaGraphDestroy(graph));
  static_cast<void>(cudaGetLastError());
}

void CudaGraph::Launch() const {
  DEMI_CHECK(exec_ != nullptr, "launching a CUDA graph that was not captured");
  DEMI_CUDA_CHECK(cudaGraphLaunch(AsExec(exec_), CudaStream()));
}

void CudaGraph::Reset() {
  // At process exit the driver may be gone: errors are ignored.
  if (exec_ != nullptr) static_cast<void>(cudaGraphExecDestroy(AsExec(exec_)));
  if (graph_ != nullptr) static_cast<void>(cudaGraphDestroy(AsGraph(graph_)));
  exec_ = graph_ = nullptr;
}

}  // namespace demi

#endif  // CPU_ONLY
