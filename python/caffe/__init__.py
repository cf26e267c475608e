"""`caffe`: Demitasse under pycaffe's package name, so that code written for
BVLC Caffe's Python package runs unchanged:

    import caffe
    from caffe import layers as L, params as P
    from caffe.proto import caffe_pb2
    from caffe.coord_map import crop

Every name is demitasse's own object (caffe.Net is demitasse.Net), and each
submodule is demitasse's under a second name (caffe.io is demitasse.io), so
the two names mix freely. With PYTHONPATH=python both packages import; new
code may as well `import demitasse`.
"""
import sys

import demitasse
from demitasse import *  # noqa: F401,F403 (the point of this package)
from demitasse import __all__  # noqa: F401

# `import caffe.io`, `from caffe.proto import caffe_pb2`: the submodules
# are demitasse's, registered under caffe's name too.
for _name, _module in list(sys.modules.items()):
    if _name.startswith("demitasse."):
        sys.modules.setdefault("caffe" + _name[len("demitasse"):], _module)
del _name, _module
