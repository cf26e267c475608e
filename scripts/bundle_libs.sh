# Sourced by scripts/make_bundle.sh and scripts/test_bundle.sh: which libraries a bundle leaves
# to the host, and how to list what an ELF file loads.

# host_provided SONAME: glibc's libraries come from the host (a copy of ours would not match
# its ld.so), and so do NVIDIA's: the driver, and the CUDA libraries util/cuda_libraries
# loads on first GPU use (the runtime is linked statically).
host_provided() {
  case $1 in
    ld-linux*.so* | libc.so.* | libm.so.* | libmvec.so.* | libpthread.so.* | libdl.so.* | \
      librt.so.* | libresolv.so.* | libutil.so.* | libanl.so.* | libnsl.so.* | \
      libcuda.so.* | libcudart.so.* | libcublas.so.* | libcublasLt.so.* | libcudnn*.so.* | \
      libnccl.so.* | libnvidia-*.so.* | libnvrtc*.so.*) return 0 ;;
  esac
  return 1
}

# is_elf FILE
is_elf() { [ "$(head -c 4 "$1" | tail -c 3)" = ELF ]; }

# bundle_elf_files DIR: the bundle's binaries and shared libraries, sorted.
bundle_elf_files() {
  find "$1" -type f \( -path "$1/tools/*" -o -path "$1/test/*" -o -path "$1/bench/*" \
    -o -name '*.so*' \) | sort |
    while read -r f; do is_elf "$f" && echo "$f"; done
}

# loaded_libraries FILE: "SONAME PATH" per library the loader resolves for FILE, PATH being
# "not" where it finds none; LD_LIBRARY_PATH is ignored.
loaded_libraries() {
  env -u LD_LIBRARY_PATH ldd "$1" | awk '$2 == "=>" { print $1, $3 }'
}
