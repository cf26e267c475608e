#!/usr/bin/env bash
# Writes the seed corpora of the fuzz targets into tests/fuzz/corpus/<target>/
# from the model zoo, the tests' inline nets, images of opencv-doc, and a
# .caffemodel/.solverstate that build_cpu's train tool writes for the net of
# weights_file.cpp. Run from the repository root after `make tools`:
#   tests/fuzz/make_corpus.sh [BUILD_DIR]   (default build_cpu)
set -euo pipefail
build=${1:-build_cpu}
out=tests/fuzz/corpus
proto=src/demi/proto/demi.proto
images=/usr/share/doc/opencv-doc/examples
rm -rf "$out"
mkdir -p "$out"/{net_prototxt,weights_file,datum_transform,image_decode,rendezvous_url}

# net_prototxt: every zoo net, and each inline net of the tests.
for f in models/*/*.prototxt; do
  case $f in *solver*) continue ;; esac
  cp "$f" "$out/net_prototxt/zoo_$(basename "$(dirname "$f")")_$(basename "$f")"
done
python3 - "$out/net_prototxt" <<'PY'
import glob, re, sys
count = 0
for path in sorted(glob.glob("tests/test_*.cpp")):
    for text in re.findall(r'R"\((.*?)\)"', open(path).read(), re.S):
        if "layer {" in text and "net_param" not in text:
            count += 1
            name = path.split("/")[-1][5:-4]
            open(f"{sys.argv[1]}/test_{name}_{count}.prototxt", "w").write(text)
PY

# image_decode: option byte (color, encoding, resize) + the file.
seed=0
for f in "$images"/text/scenetext_char01.jpg "$images"/text/scenetext_char02.jpg \
         "$images"/shape/data/shape_sample/1.png "$images"/shape/data/shape_sample/2.png; do
  for option in 0 3 13; do
    { printf "\\$(printf %03o $option)"; cat "$f"; } > "$out/image_decode/seed_$seed"
    seed=$((seed + 1))
  done
done

# datum_transform: setting byte + a Datum (raw bytes, floats, encoded image).
escaped() { od -An -v -tx1 "$1" | tr -d ' \n' | sed 's/\(..\)/\\x\1/g'; }
datum() {  # name setting text
  { printf "\\$(printf %03o "$2")"; protoc --proto_path=src --encode=demi.Datum "$proto" <<< "$3"; } \
    > "$out/datum_transform/$1"
}
pixels=$(head -c 60 "$images/shape/data/shape_sample/4.png" | od -An -v -tx1 | tr -d ' \n' | sed 's/\(..\)/\\x\1/g')
datum raw_3x4x5 1 "channels: 3 height: 4 width: 5 label: 2 data: \"$pixels\""
datum raw_1x6x10 3 "channels: 1 height: 6 width: 10 data: \"$pixels\""
datum float_1x2x3 0 "channels: 1 height: 2 width: 3 float_data: [1, 2, 3, 4.5, -1, 0]"
datum jpeg 2 "encoded: true label: 7 data: \"$(escaped "$images/text/scenetext_char03.jpg")\""
datum png 5 "encoded: true data: \"$(escaped "$images/shape/data/shape_sample/3.png")\""

# rendezvous_url: each form, and near misses.
for url in file:///tmp/demi_rendezvous redis://127.0.0.1:6379 redis://localhost/ \
           redis://host:0 file:// "redis://[::1]:6379"; do
  printf %s "$url" > "$out/rendezvous_url/$(printf %s "$url" | md5sum | head -c 8)"
done

# weights_file: kind byte (0 weights, 1 solver state) + a snapshot of the net
# in weights_file.cpp, trained two iterations by the train tool.
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
sed -n '/kSolver = R"(/,/})";/p' tests/fuzz/weights_file.cpp | sed '1d;$d' > "$work/solver.prototxt"
echo '  }' >> "$work/solver.prototxt"
sed -i "s|max_iter: 10|max_iter: 2 snapshot: 2 snapshot_prefix: \"$work/snap\"|" "$work/solver.prototxt"
"$build/tools/train" --solver="$work/solver.prototxt" > "$work/log" 2>&1 || { cat "$work/log"; exit 1; }
{ printf '\000'; cat "$work/snap_iter_2.caffemodel"; } > "$out/weights_file/caffemodel"
{ printf '\001'; cat "$work/snap_iter_2.solverstate"; } > "$out/weights_file/solverstate"
du -sh "$out"
