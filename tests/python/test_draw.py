"""demitasse.draw (pycaffe's caffe.draw): a NetParameter as DOT, by phase,
with in-place blobs as new nodes, rendered by Graphviz."""
import re

from google.protobuf import text_format

from demitasse import draw
from demitasse.proto import caffe_pb2
from conftest import REPO

LENET = REPO / "models" / "lenet" / "lenet_dummy.prototxt"
NODE = re.compile(r'^  (\w+) \[label="((?:[^"\\]|\\.)*)", (.*)\];$')
EDGE = re.compile(r'^  (\w+) -> (\w+)(?: \[label="(.*)"\])?;$')


def lenet():
    return text_format.Parse(LENET.read_text(), caffe_pb2.NetParameter())


def parse_dot(text):
    """({node: (label lines, style)}, [(tail, head, label)]) of net_to_dot's text."""
    nodes, edges = {}, []
    for line in text.splitlines():
        if m := NODE.match(line):
            nodes[m[1]] = (m[2].split("\\n"), m[3])
        elif m := EDGE.match(line):
            edges.append((m[1], m[2], m[3]))
    return nodes, edges


def is_acyclic(nodes, edges):
    indegree = {node: 0 for node in nodes}
    for _, head, _ in edges:
        indegree[head] += 1
    ready = [node for node, degree in indegree.items() if degree == 0]
    seen = 0
    while ready:
        node = ready.pop()
        seen += 1
        for tail, head, _ in edges:
            if tail == node:
                indegree[head] -= 1
                if indegree[head] == 0:
                    ready.append(head)
    return seen == len(nodes)


def test_dot_by_phase_with_in_place_blobs():
    net = lenet()
    for phase, expected_layers in ((caffe_pb2.TRAIN, 9), (caffe_pb2.TEST, 10), (None, 10)):
        nodes, edges = parse_dot(draw.net_to_dot(net, "LR", phase=phase))
        layers = [lines for lines, style in nodes.values() if "box" in style]
        blobs = sorted(lines[0] for lines, style in nodes.values() if "octagon" in style)
        assert len(layers) == expected_layers
        assert ("accuracy" in [lines[0] for lines in layers]) == (phase != caffe_pb2.TRAIN)
        # relu1 writes ip1 in place: a second ip1 node keeps the graph acyclic.
        assert blobs == sorted(["data", "label", "conv1", "pool1", "conv2", "pool2", "ip1", "ip1",
                                "ip2", "loss"] + (["accuracy"] if expected_layers == 10 else []))
        included = [layer for layer in net.layer
                    if phase is None or not layer.include or layer.include[0].phase == phase]
        assert len(edges) == sum(len(layer.bottom) + len(layer.top) for layer in included)
        assert is_acyclic(nodes, edges)
    nodes, edges = parse_dot(draw.net_to_dot(net, "LR", display_lrm=True))
    by_name = {lines[0]: (node, lines, style) for node, (lines, style) in nodes.items()
               if "box" in style}
    conv1, lines, _ = by_name["conv1"]
    assert lines == ["conv1", "(Convolution)", "kernel size: 5", "stride: 1", "pad: 0",
                     "outputs: 20", "lr mult: 1, 2"]
    assert [label for tail, _, label in edges if tail == conv1] == ["20"]
    assert "#90EE90" in by_name["relu1"][2] and "#90EE90" not in by_name["ip1"][2]
    assert by_name["pool1"][1][2] == "MAX kernel size: 2"


def test_graphviz_renders_it(tmp_path):
    svg = draw.draw_net(lenet(), "TB", ext="svg")
    assert b"<svg" in svg and b"conv1" in svg
    path = tmp_path / "lenet.png"
    draw.draw_net_to_file(lenet(), str(path), phase=caffe_pb2.TEST)
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
