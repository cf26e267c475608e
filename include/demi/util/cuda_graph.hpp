#ifndef DEMI_UTIL_CUDA_GRAPH_HPP_
#define DEMI_UTIL_CUDA_GRAPH_HPP_

// A CUDA graph of this thread's stream: what the host queued between
// BeginCapture and EndCapture, replayed by Launch with one call. CUDA builds
// only.
#ifndef CPU_ONLY

#include <string>

namespace demi {

/// @brief Owns one captured and instantiated graph of CudaStream().
///
/// Capture records kernels, copies and library calls without running them;
/// every Launch then runs them all again, with the same arguments and device
/// addresses. The capture is thread-local (cudaStreamCaptureModeThreadLocal):
/// other threads (a data layer's prefetch) may use CUDA meanwhile. While it
/// lasts, a failed CUDA, cuBLAS or cuDNN call throws an Error rather than
/// aborting (CudaCallFailed), so that a caller can leave out what a graph
/// cannot hold.
class CudaGraph {
 public:
  CudaGraph() = default;
  ~CudaGraph();
  CudaGraph(const CudaGraph&) = delete;
  CudaGraph& operator=(const CudaGraph&) = delete;
  CudaGraph(CudaGraph&& other) noexcept;
  CudaGraph& operator=(CudaGraph&& other) noexcept;

  /// Starts capturing CudaStream() (dropping any graph held).
  void BeginCapture();
  /// "" while the capture holds everything queued since BeginCapture, else
  /// why it does not (CUDA's word for the state).
  std::string CaptureProblem() const;
  /// Ends the capture and instantiates the graph; throws with CUDA's message
  /// when the capture broke.
  void EndCapture();
  /// Ends a capture that is being given up, ignoring its errors.
  void AbandonCapture();
  /// Queues the graph on CudaStream() (after EndCapture).
  void Launch() const;
  /// Drops the graph.
  void Reset();

 private:
  void* graph_ = nullptr;  ///< cudaGraph_t
  void* exec_ = nullptr;   ///< cudaGraphExec_t
  bool capturing_ = false;
};

}  // namespace demi

#endif  // CPU_ONLY
#endif  // DEMI_UTIL_CUDA_GRAPH_HPP_
