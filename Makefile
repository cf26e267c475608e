# Demitasse. Targets: all, runtest, test, tools, lib, python, lint, demo, bench, bundle, fuzz,
# clean.
# Sources are found by pattern: adding a layer or a test means adding files.

CONFIG_FILE := Makefile.config
ifeq ($(wildcard $(CONFIG_FILE)),)
  $(shell cp Makefile.config.example $(CONFIG_FILE))
endif
include $(CONFIG_FILE)

BUILD_DIR ?= build
CXX ?= g++

# ---- sources ----
PROTO_SRC := src/demi/proto/demi.proto
PROTO_GEN_DIR := $(BUILD_DIR)/src/demi/proto
PROTO_GEN_CC := $(PROTO_GEN_DIR)/demi.pb.cc
PROTO_GEN_H := $(PROTO_GEN_DIR)/demi.pb.h
LIB_SRCS := $(shell find src/demi -name '*.cpp' | sort)
TOOL_SRCS := $(wildcard tools/*.cpp)
TEST_SRCS := $(wildcard tests/*.cpp)
BENCH_SRCS := $(wildcard bench/*.cpp)
PY_SRCS := $(wildcard python/src/*.cpp)

LIB_OBJS := $(LIB_SRCS:%.cpp=$(BUILD_DIR)/objs/%.o) $(BUILD_DIR)/objs/proto/demi.pb.o
TOOL_OBJS := $(TOOL_SRCS:%.cpp=$(BUILD_DIR)/objs/%.o)
TEST_OBJS := $(TEST_SRCS:%.cpp=$(BUILD_DIR)/objs/%.o)
BENCH_OBJS := $(BENCH_SRCS:%.cpp=$(BUILD_DIR)/objs/%.o)
PY_OBJS := $(PY_SRCS:%.cpp=$(BUILD_DIR)/objs/%.o)
TOOL_BINS := $(TOOL_SRCS:tools/%.cpp=$(BUILD_DIR)/tools/%)
BENCH_BINS := $(BENCH_SRCS:bench/%.cpp=$(BUILD_DIR)/bench/%)
STATIC_LIB := $(BUILD_DIR)/lib/libdemi.a
SHARED_LIB := $(BUILD_DIR)/lib/libdemi.so
TEST_BIN := $(BUILD_DIR)/test/test_all

# ---- flags ----
# Deferred (=): on a fresh machine OpenCV arrives with the deps stamp, after parsing.
OPENCV_CFLAGS = $(shell pkg-config --cflags opencv4 2>/dev/null)
# Not imgcodecs: util/lazy_imgcodecs loads it on the first image read or written,
# so that its GDAL, GDCM and ICU stay out of every process and of `make bundle`.
OPENCV_LIBS := -lopencv_imgproc -lopencv_core
# HDF5Data/HDF5Output: Debian's serial HDF5 C library (libhdf5-dev).
HDF5_CFLAGS := -I/usr/include/hdf5/serial
HDF5_LIBS := -lhdf5_serial
CPPFLAGS += -Iinclude -I$(BUILD_DIR)/src -I$(BLAS_INCLUDE) $(OPENCV_CFLAGS) $(HDF5_CFLAGS) \
            $(addprefix -I,$(INCLUDE_DIRS)) -MMD -MP -DHIREDIS_NESTED_INCLUDE
CXXFLAGS += -std=c++17 -fPIC -pthread -fopenmp
# No FMA contraction: the AVX2/AVX-512 clones of util/math's loops (and their
# scalar tails) then round exactly as the baseline x86-64 code, so results do
# not depend on the CPU's ISA nor on where a loop is split among threads.
# No trapping math (Clang's default; nothing here reads FP exception flags):
# GCC may then compute both sides of a select, so `x > 0 ? x : a * x` loops
# vectorise. No math errno (nothing here reads errno after a math call):
# std::sqrt in a loop then vectorises too, instead of branching to set errno
# for a negative argument. None of the three flags changes a computed value.
CXXFLAGS += -ffp-contract=off -fno-trapping-math -fno-math-errno
WARNINGS := -Wall -Wextra -Wno-unused-parameter -Werror
# Which compiler CXX is: flags only one of GCC and Clang knows go under this.
CXX_IS_CLANG := $(if $(findstring clang,$(shell $(CXX) --version 2>/dev/null | head -n 1)),1,0)
ifeq ($(CXX_IS_CLANG),1)
  # Clang warns of each `omp simd` loop it did not vectorise, as it never
  # does under the sanitizers; the loops are still correct.
  WARNINGS += -Wno-pass-failed
endif
ifeq ($(DEBUG),1)
  CXXFLAGS += -O0 -g
else
  CXXFLAGS += -O2 -g1 -DNDEBUG
endif
# ---- CUDA: on when nvcc is found, unless CPU_ONLY or USE_CUDA := 0 ----
CUDA_DIR ?= /usr/local/cuda
NVCC ?= $(firstword $(wildcard $(CUDA_DIR)/bin/nvcc) $(shell command -v nvcc 2>/dev/null))
ifeq ($(CPU_ONLY),1)
  USE_CUDA := 0
endif
USE_CUDA ?= $(if $(NVCC),1,0)
CUDA_ARCH ?= 80 90
# cuDNN and NCCL: on when their headers are found, unless Makefile.config says.
USE_CUDNN ?= $(if $(wildcard $(CUDA_DIR)/include/cudnn.h /usr/include/cudnn.h),1,0)
USE_NCCL ?= $(if $(wildcard $(CUDA_DIR)/include/nccl.h /usr/include/nccl.h),1,0)
ifeq ($(USE_CUDA),1)
  CU_SRCS := $(shell find src/demi -name '*.cu' | sort)
  CPPFLAGS += -I$(CUDA_DIR)/include
  # The runtime statically (it loads the driver on its first call); cuBLAS,
  # cuDNN and NCCL not at all: util/cuda_libraries loads them on first GPU
  # use, so a CPU run of this build maps none of them. The rpath is where
  # that dlopen looks first.
  CUDA_LIBS := -L$(CUDA_DIR)/lib64 -Wl,-rpath,$(CUDA_DIR)/lib64 -lcudart_static -ldl -lrt
  ifeq ($(USE_CUDNN),1)
    CPPFLAGS += -DUSE_CUDNN
  endif
  ifeq ($(USE_NCCL),1)
    CPPFLAGS += -DUSE_NCCL
  endif
  NVCCFLAGS := -ccbin $(CXX) -std=c++17 -O2 -lineinfo \
               $(foreach arch,$(CUDA_ARCH),-gencode arch=compute_$(arch),code=sm_$(arch)) \
               -Xcompiler -fPIC,-pthread,-fopenmp,-Wall,-Wextra,-Wno-unused-parameter,-Werror \
               --Werror all-warnings -Iinclude -I$(BUILD_DIR)/src -I$(CUDA_DIR)/include \
               $(addprefix -I,$(INCLUDE_DIRS)) $(filter -D%,$(CPPFLAGS))
else
  CU_SRCS :=
  CPPFLAGS += -DCPU_ONLY
endif
CU_OBJS := $(CU_SRCS:%.cu=$(BUILD_DIR)/objs/%.cu.o)
LIB_OBJS += $(CU_OBJS)
# ---- fuzzing (FUZZ=1, set by `make fuzz`): Clang's libFuzzer, ASan, UBSan ----
# Every object gets coverage instrumentation (fuzzer-no-link) and both
# sanitizers; undefined behaviour aborts, so libFuzzer reports it as a crash.
ifeq ($(FUZZ),1)
  ifneq ($(CXX_IS_CLANG),1)
    $(error FUZZ=1 needs Clang (CXX=clang++), not $(CXX))
  endif
  FUZZ_SANITIZE := -fsanitize=address,undefined -fno-sanitize-recover=undefined
  CXXFLAGS += -fsanitize=fuzzer-no-link $(FUZZ_SANITIZE) -fno-omit-frame-pointer
  LDFLAGS += $(FUZZ_SANITIZE)
endif
# ---- sanitizers (SANITIZE=address,undefined or SANITIZE=thread): CI's extra stages ----
# -O1 builds faster and keeps stacks readable; undefined behaviour aborts the
# test that hits it. GCC 12 warns maybe-uninitialized inside std::regex under
# the sanitizers (a known false positive), so that warning is off there.
ifneq ($(SANITIZE),)
  SANITIZER_FLAGS := -fsanitize=$(SANITIZE) -fno-omit-frame-pointer
  ifneq ($(findstring undefined,$(SANITIZE)),)
    SANITIZER_FLAGS += -fno-sanitize-recover=undefined
  endif
  CXXFLAGS += $(SANITIZER_FLAGS) -O1 -Wno-maybe-uninitialized
  LDFLAGS += $(SANITIZER_FLAGS)
  ifneq ($(findstring thread,$(SANITIZE)),)
    # util/math's per-ISA clones resolve before TSan starts (see there).
    CPPFLAGS += -DDEMI_NO_TARGET_CLONES
    # runtest runs the suites whose code has threads of its own: replication
    # (threads, processes, Gloo), the data layers' prefetch and worker pools,
    # signals. One OpenMP thread: libgomp is not instrumented, so TSan cannot
    # see its barriers and would report every parallel loop. For that reason
    # ReplicationThreadsTest, which must run OpenMP teams of two, is left out.
    # The test binary is then linked from the files holding those suites alone (a third of
    # the build's compile time saved); with a GTEST_FILTER of your own, from every file.
    ifeq ($(origin GTEST_FILTER),undefined)
      GTEST_FILTER := Replication*:ReplicaEquivalence*:ThreadCommunicator*:GlooCommunicator*:HierarchicalCommunicator*:Prefetcher*:WorkerPool*:DataLayer*:ImageDataLayer*:HDF5DataLayer*:ByteBatches*:ImageDataByteBatches*:DBReader*:Signal*:StopWatchdog*:TrainToolTest.SignalsSnapshotAndStop-ReplicationThreadsTest.*
      TSAN_TEST_FILES := main replication replication_processes thread_communicator \
                         gloo_communicator reader data_layer image_data_layer hdf5_data_layer \
                         byte_batches signal stop_watchdog tools
      TEST_SRCS := $(TSAN_TEST_FILES:%=tests/test_%.cpp)
      TEST_OBJS := $(TEST_SRCS:%.cpp=$(BUILD_DIR)/objs/%.o)
    endif
    export OMP_NUM_THREADS := 1
    export TSAN_OPTIONS ?= suppressions=$(CURDIR)/tests/tsan.supp second_deadlock_stack=1
  endif
endif
# ---- precompiled headers (USE_PCH): compiled once per build directory ----
# include/demi/precompiled.hpp (the schema's classes, glog, the STL) for every object, and
# tests/precompiled_test.hpp (that and GoogleTest) for the tests', each copied into
# BUILD_DIR/pch and compiled there with the build's own flags; each source is compiled with
# `-include` of its copy, and where GCC finds the .gch unusable it reads the copy as text.
# They halve a small file's compile time. Off under ccache (which cannot cache objects
# compiled with one) and Clang, so such builds still check that each file includes what it
# uses.
USE_PCH ?= $(if $(or $(findstring ccache,$(CXX)),$(filter 1,$(CXX_IS_CLANG))),0,1)
PCH_DIR := $(BUILD_DIR)/pch
LIB_PCH := $(PCH_DIR)/precompiled.hpp
TEST_PCH := $(PCH_DIR)/precompiled_test.hpp
ifeq ($(USE_PCH),1)
  LIB_PCH_GCH := $(LIB_PCH).gch
  TEST_PCH_GCH := $(TEST_PCH).gch
  PCH_FLAGS = -include $(LIB_PCH)
  $(TEST_OBJS): PCH_FLAGS = -include $(TEST_PCH)
endif
LDFLAGS += -pthread -fopenmp -L$(BLAS_LIB) $(addprefix -L,$(LIBRARY_DIRS))
LIBS := -lprotobuf -lglog -lgflags -llmdb $(OPENCV_LIBS) $(HDF5_LIBS) -ljpeg -ldnnl -lopenblas -lgloo -lhiredis $(CUDA_LIBS) -lm
WHOLE_LIB := -Wl,--whole-archive $(STATIC_LIB) -Wl,--no-whole-archive

# ---- Python bindings (make python) ----
# Debian's interpreter by default: pybind11-dev, python3-numpy and
# python3-pytest are installed for it. Deferred (=): python3-dev may arrive
# with the deps stamp, after parsing.
PYTHON ?= /usr/bin/python3
PY_INCLUDES = $(patsubst -I%,-isystem%,$(sort $(shell $(PYTHON)-config --includes)))
PY_EXT_SUFFIX = $(shell $(PYTHON)-config --extension-suffix)
PY_MODULE := $(BUILD_DIR)/python/_demitasse.so
PY_PACKAGE_MODULE = python/demitasse/_demitasse$(PY_EXT_SUFFIX)
# pycaffe's caffe_pb2: the Python classes of our schema (python3-protobuf).
PY_PROTO_GEN := $(BUILD_DIR)/python/demi/proto/demi_pb2.py
PY_PACKAGE_PROTO := python/demitasse/proto/caffe_pb2.py
PYTEST_FLAGS ?= -q
# Python layers (type "Python", python/src/python_layer.cpp), as Caffe's
# WITH_PYTHON_LAYER: on where python3-config and pybind11's embedding header
# exist, off under SANITIZE and FUZZ (an instrumented program embedding an
# uninstrumented interpreter is trouble). The Python module registers the
# layer; the tools link it too, with the module's bindings built in and
# libpython, and start an interpreter for the first Python layer. Without
# them, a "Python" layer is an error saying how to turn them on.
PY_LAYER_READY := $(if $(and $(shell command -v $(PYTHON)-config),$(wildcard /usr/include/pybind11/embed.h)),1,0)
ifneq ($(SANITIZE)$(filter 1,$(FUZZ)),)
  WITH_PYTHON_LAYER := 0
endif
WITH_PYTHON_LAYER ?= $(PY_LAYER_READY)
PY_EMBED_SRCS := python/src/python_layer.cpp python/src/embed.cpp
ifeq ($(WITH_PYTHON_LAYER),1)
  # Only the files that ask: a flag every object saw would rebuild them all.
  $(BUILD_DIR)/objs/src/demi/layer_registry.o $(BUILD_DIR)/objs/tests/test_python_layer.o \
    $(PY_OBJS): CPPFLAGS += -DWITH_PYTHON_LAYER
  PY_EMBED_LIBS = $(shell $(PYTHON)-config --embed --ldflags)
  # The tools get every binding but the extension's entry point.
  TOOL_PY_OBJS := $(filter-out $(BUILD_DIR)/objs/python/src/module.o,$(PY_OBJS))
  PY_MODULE_OBJS := $(filter-out $(BUILD_DIR)/objs/python/src/embed.o,$(PY_OBJS))
else
  PY_OBJS := $(filter-out $(PY_EMBED_SRCS:%.cpp=$(BUILD_DIR)/objs/%.o),$(PY_OBJS))
  PY_MODULE_OBJS := $(PY_OBJS)
endif

# ---- dependency check: runs scripts/install_deps.sh once per build dir ----
DEPS_STAMP := $(BUILD_DIR)/.deps_ok
$(DEPS_STAMP): scripts/install_deps.sh
	@bash scripts/install_deps.sh $(if $(filter 1,$(FUZZ)),--fuzz)
	@mkdir -p $(@D) && touch $@

.PHONY: all lib tools test python runtest lint tidy_cuda demo bench bundle clean deps fuzz fuzz_targets \
        fuzz_run
all: lib tools test
deps: $(DEPS_STAMP)
lib: $(STATIC_LIB) $(SHARED_LIB)
tools: $(TOOL_BINS)
test: $(TEST_BIN)

$(PROTO_GEN_CC) $(PROTO_GEN_H) &: $(PROTO_SRC) | $(DEPS_STAMP)
	@mkdir -p $(PROTO_GEN_DIR)
	protoc --proto_path=src --cpp_out=$(BUILD_DIR)/src $(PROTO_SRC)

$(BUILD_DIR)/objs/proto/demi.pb.o: $(PROTO_GEN_CC) $(LIB_PCH_GCH)
	@mkdir -p $(@D)
	$(CXX) $(CPPFLAGS) $(CXXFLAGS) $(PCH_FLAGS) -c $< -o $@

$(BUILD_DIR)/objs/%.o: %.cpp | $(PROTO_GEN_H)
	@mkdir -p $(@D)
	$(CXX) $(CPPFLAGS) $(CXXFLAGS) $(WARNINGS) $(PCH_FLAGS) -c $< -o $@

# The precompiled headers: a copy beside each .gch, so that GCC can fall back to it.
$(PCH_DIR)/%.hpp: include/demi/%.hpp
	@mkdir -p $(@D)
	cp $< $@
$(PCH_DIR)/%.hpp: tests/%.hpp
	@mkdir -p $(@D)
	cp $< $@
# Kept: make would delete them as intermediate files, and then copy and compile them again.
.SECONDARY: $(LIB_PCH) $(TEST_PCH)
$(PCH_DIR)/%.hpp.gch: $(PCH_DIR)/%.hpp $(PROTO_GEN_H)
	$(CXX) $(CPPFLAGS) $(CXXFLAGS) $(WARNINGS) -x c++-header $< -o $@
$(filter-out $(CU_OBJS),$(LIB_OBJS)) $(TOOL_OBJS) $(BENCH_OBJS): $(LIB_PCH_GCH)
$(TEST_OBJS): $(TEST_PCH_GCH)
$(TEST_PCH_GCH): include/demi/precompiled.hpp

# CUDA twins: x.cu beside x.cpp, warnings are errors.
$(BUILD_DIR)/objs/%.cu.o: %.cu | $(PROTO_GEN_H)
	@mkdir -p $(@D)
	$(NVCC) $(NVCCFLAGS) -MMD -MP -c $< -o $@

$(STATIC_LIB): $(LIB_OBJS)
	@mkdir -p $(@D)
	@rm -f $@
	ar rcs $@ $^

$(SHARED_LIB): $(LIB_OBJS)
	@mkdir -p $(@D)
	$(CXX) -shared -o $@ $^ $(LDFLAGS) $(LIBS)

$(BUILD_DIR)/tools/%: $(BUILD_DIR)/objs/tools/%.o $(STATIC_LIB) $(TOOL_PY_OBJS)
	@mkdir -p $(@D)
	$(CXX) $< $(TOOL_PY_OBJS) -o $@ $(WHOLE_LIB) $(LDFLAGS) $(LIBS) $(PY_EMBED_LIBS)

$(TEST_BIN): $(TEST_OBJS) $(STATIC_LIB)
	@mkdir -p $(@D)
	$(CXX) $(TEST_OBJS) -o $@ $(WHOLE_LIB) $(LDFLAGS) -lgtest -lgmock $(LIBS)

$(BUILD_DIR)/bench/%: $(BUILD_DIR)/objs/bench/%.o $(STATIC_LIB)
	@mkdir -p $(@D)
	$(CXX) $< -o $@ $(WHOLE_LIB) $(LDFLAGS) -lbenchmark $(LIBS)

# The extension module links the static library whole (layers register
# themselves) and every library the tools link, CUDA's included. It is built
# in BUILD_DIR and copied into python/demitasse, so that
# `PYTHONPATH=python python3` imports the last build made.
$(PY_OBJS): CPPFLAGS += $(PY_INCLUDES)
$(PY_OBJS): CXXFLAGS += -fvisibility=hidden
$(PY_OBJS): PCH_FLAGS =

$(PY_MODULE): $(PY_MODULE_OBJS) $(STATIC_LIB)
	@mkdir -p $(@D)
	$(CXX) -shared $(PY_MODULE_OBJS) -o $@ $(WHOLE_LIB) $(LDFLAGS) $(LIBS)

# The Python classes of demi.proto, generated from whatever the schema holds
# and installed as demitasse.proto.caffe_pb2 (the module name pycaffe code
# imports; the messages keep their package, demi).
$(PY_PROTO_GEN): $(PROTO_SRC) | $(DEPS_STAMP)
	@mkdir -p $(BUILD_DIR)/python
	protoc --proto_path=src --python_out=$(BUILD_DIR)/python $(PROTO_SRC)

$(PY_PACKAGE_PROTO): $(PY_PROTO_GEN)
	@cp $< $@.tmp && mv -f $@.tmp $@

# Copied through a temporary file and a rename: a running interpreter may
# have the old module mapped.
python: $(PY_MODULE) $(PY_PACKAGE_PROTO)
	@cp $(PY_MODULE) $(PY_PACKAGE_MODULE).tmp && mv -f $(PY_PACKAGE_MODULE).tmp $(PY_PACKAGE_MODULE)
	@echo "python: built $(PY_PACKAGE_MODULE) and $(PY_PACKAGE_PROTO); import demitasse (or caffe) with PYTHONPATH=python"

# Runs every test: the C++ suite (GTEST_FILTER=... narrows it), then the
# Python tests, except under sanitizers: a module built with them cannot be
# loaded by an uninstrumented interpreter.
runtest: $(TEST_BIN) $(TOOL_BINS) $(if $(SANITIZE),,python)
	$(TEST_BIN) $(if $(GTEST_FILTER),--gtest_filter=$(GTEST_FILTER))
ifneq ($(SANITIZE),)
	@echo "runtest: Python tests skipped under SANITIZE=$(SANITIZE) (an instrumented module cannot load into python3)"
else
	DEMI_BUILD_DIR=$(BUILD_DIR) PYTHONPATH=python $(PYTHON) -m pytest $(PYTEST_FLAGS) tests/python
endif

# clang-format check of the C++ sources changed against HEAD (and new ones).
lint:
	@files=$$( (git diff --name-only HEAD; git ls-files --others --exclude-standard) | \
	  grep -E '\.(cpp|hpp|cu)$$' | sort -u | while read f; do [ -f "$$f" ] && echo "$$f"; done); \
	if [ -z "$$files" ]; then echo "lint: no changed C++ sources"; exit 0; fi; \
	clang-format --dry-run -Werror $$files && echo "lint: clean"

# clang-tidy over the CUDA sources, parsed by clang (needs clang-tidy-19 or newer).
tidy_cuda: lib
	scripts/tidy_cuda.sh $(BUILD_DIR)

demo: tools
	bash examples/demo.sh

bench: $(BENCH_BINS) tools
	@for b in $(BENCH_BINS); do echo "== $$b"; $$b || exit 1; done
	bash bench/memory.sh

# ---- make bundle: one relocatable tarball for machines without our build packages ----
# BUILD_DIR/demitasse-bundle-<cpu|cuda>.tar.xz (scripts/make_bundle.sh packs it; scripts/
# test_bundle.sh tests it): the tools, test_all and the Python module, relinked here against
# libdemi.so (one copy of the library, not one per tool) with a RUNPATH of $ORIGIN/..., and
# every library they load but glibc's and NVIDIA's. A link step, no compiling: the bundle is
# made from whichever build BUILD_DIR holds. Each relinked binary takes the util/lazy_<library>.o
# objects too: the forwarders there (cv::imdecode, cublasSgemm...) are hidden in libdemi.so.
BUNDLE_FLAVOR := $(if $(filter 1,$(USE_CUDA)),cuda,cpu)
BUNDLE := $(BUILD_DIR)/demitasse-bundle-$(BUNDLE_FLAVOR).tar.xz
BUNDLE_BIN := $(BUILD_DIR)/bundle_bin
BUNDLE_TOOLS := $(TOOL_SRCS:tools/%.cpp=$(BUNDLE_BIN)/tools/%)
BUNDLE_LAZY_OBJS := $(filter-out %/lazy_library.o,\
                      $(filter $(BUILD_DIR)/objs/src/demi/util/lazy_%.o,$(LIB_OBJS)))
BUNDLE_LINK = $(BUNDLE_LAZY_OBJS) -L$(BUILD_DIR)/lib -l:libdemi.so $(LDFLAGS) $(LIBS)
BUNDLE_PY_MODULE = $(BUNDLE_BIN)/python/_demitasse$(PY_EXT_SUFFIX)

$(BUNDLE_BIN)/tools/%: $(BUILD_DIR)/objs/tools/%.o $(SHARED_LIB) $(TOOL_PY_OBJS)
	@mkdir -p $(@D)
	$(CXX) $< $(TOOL_PY_OBJS) -o $@ -Wl,-rpath,'$$ORIGIN/../lib' $(BUNDLE_LINK) $(PY_EMBED_LIBS)

$(BUNDLE_BIN)/test/test_all: $(TEST_OBJS) $(SHARED_LIB)
	@mkdir -p $(@D)
	$(CXX) $(TEST_OBJS) -o $@ -Wl,-rpath,'$$ORIGIN/../lib' -lgtest -lgmock $(BUNDLE_LINK)

$(BUNDLE_BIN)/python/_demitasse%: $(PY_MODULE_OBJS) $(SHARED_LIB)
	@mkdir -p $(@D)
	$(CXX) -shared $(PY_MODULE_OBJS) -o $@ -Wl,-rpath,'$$ORIGIN/../../lib' $(BUNDLE_LINK)

# bench/gpu.sh's data step runs this one from the bundle.
$(BUNDLE_BIN)/bench/data_throughput: $(BUILD_DIR)/objs/bench/data_throughput.o $(SHARED_LIB)
	@mkdir -p $(@D)
	$(CXX) $< -o $@ -Wl,-rpath,'$$ORIGIN/../lib' $(BUNDLE_LINK)

bundle: $(BUNDLE_TOOLS) $(BUNDLE_BIN)/test/test_all $(BUNDLE_BIN)/bench/data_throughput \
        $(BUNDLE_PY_MODULE) $(PY_PACKAGE_PROTO)
	bash scripts/make_bundle.sh $(BUILD_DIR) $(BUNDLE_FLAVOR) $(BUNDLE_PY_MODULE)

# ---- make fuzz: each tests/fuzz/<target>.cpp runs FUZZ_SECONDS from its seeds ----
# A build of its own (clang++, CPU_ONLY, sanitizers) in build_fuzz unless
# BUILD_DIR is given on the command line; new inputs go to
# BUILD_DIR/fuzz/corpus/<target>, the seeds in tests/fuzz/corpus stay as they are.
FUZZ_SECONDS ?= 60
# libFuzzer's resident-memory cap (default 2048): a decoded image of tens of
# MB under ASan's quarantine passes 2 GB with a live heap of some 80 MB.
FUZZ_RSS_MB ?= 4096
FUZZ_CXX ?= clang++
FUZZ_BUILD_DIR := $(if $(filter command line,$(origin BUILD_DIR)),$(BUILD_DIR),build_fuzz)
FUZZ_SRCS := $(wildcard tests/fuzz/*.cpp)
FUZZ_OBJS := $(FUZZ_SRCS:%.cpp=$(BUILD_DIR)/objs/%.o)
FUZZ_BINS := $(FUZZ_SRCS:tests/fuzz/%.cpp=$(BUILD_DIR)/fuzz/%)

fuzz:
	$(MAKE) fuzz_run FUZZ=1 CPU_ONLY=1 CXX=$(FUZZ_CXX) BUILD_DIR=$(FUZZ_BUILD_DIR)

fuzz_targets: $(FUZZ_BINS)
.SECONDARY: $(FUZZ_OBJS)

$(BUILD_DIR)/fuzz/%: $(BUILD_DIR)/objs/tests/fuzz/%.o $(STATIC_LIB)
	@mkdir -p $(@D)
	$(CXX) -fsanitize=fuzzer $< -o $@ $(WHOLE_LIB) $(LDFLAGS) $(LIBS)

fuzz_run: $(FUZZ_BINS)
	@for bin in $(FUZZ_BINS); do \
	  target=$$(basename $$bin); corpus=$(BUILD_DIR)/fuzz/corpus/$$target; \
	  mkdir -p $$corpus; echo "== $$target ($(FUZZ_SECONDS) s)"; \
	  $$bin -max_total_time=$(FUZZ_SECONDS) -rss_limit_mb=$(FUZZ_RSS_MB) \
	    -artifact_prefix=$(BUILD_DIR)/fuzz/$$target- \
	    $$corpus tests/fuzz/corpus/$$target || exit 1; \
	done

clean:
	rm -rf $(BUILD_DIR)
	rm -f python/demitasse/_demitasse*.so $(PY_PACKAGE_PROTO)

-include $(LIB_OBJS:.o=.d) $(CU_OBJS:.o=.d) $(TOOL_OBJS:.o=.d) $(TEST_OBJS:.o=.d) $(BENCH_OBJS:.o=.d) \
         $(FUZZ_OBJS:.o=.d) $(PY_OBJS:.o=.d)
