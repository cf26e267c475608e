"""Drawings of a NetParameter with Graphviz, as pycaffe's caffe.draw:

    net = text_format.Merge(open(path).read(), caffe_pb2.NetParameter())
    caffe.draw.draw_net_to_file(net, "net.png", rankdir="LR", phase=caffe.TRAIN)

Layers are boxes (name, type, key options; in-place pointwise layers green),
blobs are octagons; a blob written in place gets a new node for each writer,
so the drawing stays acyclic. The DOT text is ours (net_to_dot); `dot`
(Debian's graphviz) renders it. This draws the prototxt as written, no net is
built: tools/draw_net draws a built net with its memory plan.
"""
import os
import subprocess

from .proto import caffe_pb2

LAYER_STYLE = 'shape=box, style=filled, fillcolor="#6495ED"'
IN_PLACE_STYLE = 'shape=box, style=filled, fillcolor="#90EE90"'
BLOB_STYLE = 'shape=octagon, style=filled, fillcolor="#E0E0E0"'


def _quoted(*lines, separator="\\n"):
    """`lines` as one DOT string, joined by `separator` (DOT's line break
    by default), quotes and backslashes escaped."""
    return '"' + separator.join(str(line).replace("\\", "\\\\").replace('"', '\\"')
                                for line in lines) + '"'


def _spatial(values, legacy_h=0, legacy_w=0, default=None):
    """A repeated per-axis field (or its legacy _h/_w pair) as "3" or "3x5"."""
    values = list(values) or ([legacy_h, legacy_w] if legacy_h or legacy_w else [])
    if not values:
        return None if default is None else str(default)
    return "x".join(str(value) for value in values)


def _descriptors(layer, display_lrm):
    """The lines of a layer's label after its name and type."""
    lines = []
    if layer.type in ("Convolution", "Deconvolution"):
        conv = layer.convolution_param
        lines.append(f"kernel size: {_spatial(conv.kernel_size, conv.kernel_h, conv.kernel_w)}")
        lines.append(f"stride: {_spatial(conv.stride, conv.stride_h, conv.stride_w, 1)}")
        lines.append(f"pad: {_spatial(conv.pad, conv.pad_h, conv.pad_w, 0)}")
        lines.append(f"outputs: {conv.num_output}")
    elif layer.type == "Pooling":
        pool = layer.pooling_param
        method = caffe_pb2.PoolingParameter.PoolMethod.Name(pool.pool)
        if pool.global_pooling:
            lines.append(f"{method}, global")
        else:
            kernel = pool.kernel_size or f"{pool.kernel_h}x{pool.kernel_w}"
            lines.append(f"{method} kernel size: {kernel}")
            lines.append(f"stride: {pool.stride}")
            lines.append(f"pad: {pool.pad}")
    elif layer.type == "InnerProduct":
        lines.append(f"outputs: {layer.inner_product_param.num_output}")
    if display_lrm and layer.param:
        lines.append("lr mult: " + ", ".join(f"{spec.lr_mult:g}" for spec in layer.param))
    return lines


def _edge_label(layer):
    if layer.type == "Data":
        return f"batch {layer.data_param.batch_size}"
    if layer.type in ("Convolution", "Deconvolution"):
        return str(layer.convolution_param.num_output)
    if layer.type == "InnerProduct":
        return str(layer.inner_product_param.num_output)
    return ""


def _included(layer, phase):
    """pycaffe's phase filter: a layer with include rules needs one naming
    `phase`; an exclude rule naming it drops the layer."""
    if phase is None:
        return True
    included = not layer.include or any(rule.phase == phase for rule in layer.include)
    return included and not any(rule.phase == phase for rule in layer.exclude)


def net_to_dot(caffe_net, rankdir="LR", label_edges=True, phase=None, display_lrm=False):
    """The DOT text of `caffe_net` (a caffe_pb2.NetParameter): its layers of
    `phase` (all when None), left to right (rankdir "LR") or top down ("TB")."""
    lines = [f"digraph {_quoted(caffe_net.name or 'net')} {{", f"  rankdir={rankdir};"]
    blob_nodes = {}  # blob name -> the node of its latest version

    def blob_node(name, new):
        """The node of blob `name`; `new`: a writer's, a node of its own."""
        if new or name not in blob_nodes:
            blob_nodes[name] = f"blob_{len(lines)}"
            lines.append(f"  {blob_nodes[name]} [label={_quoted(name)}, {BLOB_STYLE}];")
        return blob_nodes[name]

    # Top-down drawings keep labels on one line, as pycaffe's do.
    separator = " " if rankdir in ("TB", "BT") else "\\n"
    for index, layer in enumerate(caffe_net.layer):
        if not _included(layer, phase):
            continue
        node = f"layer_{index}"
        in_place = list(layer.bottom) == list(layer.top) and len(layer.top) == 1
        label = _quoted(layer.name, f"({layer.type})", *_descriptors(layer, display_lrm),
                        separator=separator)
        lines.append(f"  {node} [label={label}, "
                     f"{IN_PLACE_STYLE if in_place else LAYER_STYLE}];")
        for bottom in layer.bottom:
            lines.append(f"  {blob_node(bottom, False)} -> {node};")
        edge = _edge_label(layer) if label_edges else ""
        for top in layer.top:
            attributes = f" [label={_quoted(edge)}]" if edge else ""
            lines.append(f"  {node} -> {blob_node(top, True)}{attributes};")
    lines.append("}")
    return "\n".join(lines) + "\n"


def draw_net(caffe_net, rankdir, ext="png", phase=None, display_lrm=False):
    """The drawing of `caffe_net` as bytes in format `ext` (png, svg, pdf,
    dot, ...: whatever `dot -T` takes)."""
    source = net_to_dot(caffe_net, rankdir, phase=phase, display_lrm=display_lrm)
    try:
        run = subprocess.run(["dot", f"-T{ext}"], input=source.encode(), capture_output=True)
    except FileNotFoundError:
        raise RuntimeError("drawing a net needs Graphviz's `dot`: install Debian's graphviz "
                           "(scripts/install_deps.sh does)") from None
    if run.returncode != 0:
        raise RuntimeError(f"dot -T{ext} failed: {run.stderr.decode(errors='replace').strip()}")
    return run.stdout


def draw_net_to_file(caffe_net, filename, rankdir="LR", phase=None, display_lrm=False):
    """Writes the drawing to `filename`, in the format its extension names
    (PNG without one)."""
    ext = os.path.splitext(os.fspath(filename))[1][1:] or "png"
    data = draw_net(caffe_net, rankdir, ext, phase, display_lrm)
    with open(filename, "wb") as out:
        out.write(data)


def get_pydot_graph(caffe_net, rankdir, label_edges=True, phase=None, display_lrm=False):
    """The drawing as a pydot graph, for code that edits it (needs pydot,
    Debian's python3-pydot, which the rest of this module does not)."""
    import pydot
    graphs = pydot.graph_from_dot_data(net_to_dot(caffe_net, rankdir, label_edges, phase,
                                                  display_lrm))
    return graphs[0]
