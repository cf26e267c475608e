"""The rank processes of test_nccl.py: Caffe's python/train.py `solve`, on
the CPU, reporting what the test checks. A module of its own, so that
spawned processes import only this (and demitasse)."""
import os

# Two ranks share the machine's cores.
os.environ.setdefault("OMP_NUM_THREADS", "1")

import demitasse as caffe  # noqa: E402


def params(solver):
    """{(layer, index): a copy of the blob's values}."""
    return {(name, i): blob.data.copy()
            for name, blobs in solver.net.params.items() for i, blob in enumerate(blobs)}


def solve(rank, count, uid, solver_file, steps, attach=True, timeout=20.0):
    """Trains rank `rank` of `count` for `steps` iterations as train.py does
    (attach=False leaves out solver.add_callback(nccl)). Returns the params
    before and after bcast and at the end, or {"error": message}."""
    try:
        caffe.set_mode_cpu()
        caffe.set_solver_count(count)
        caffe.set_solver_rank(rank)
        caffe.set_multiprocess(True)
        solver = caffe.SGDSolver(solver_file)
        initial = params(solver)
        nccl = caffe.NCCL(solver, uid, timeout=timeout)
        nccl.bcast()
        after_bcast = params(solver)
        if attach:
            solver.add_callback(nccl)
            solver.add_callback(nccl)  # a second time: still one all-reduce
        if solver.param.layer_wise_reduce:
            solver.net.after_backward(nccl)
        solver.step(steps)
        return {"initial": initial, "after_bcast": after_bcast, "final": params(solver),
                "loss": solver.smoothed_loss, "test_nets": len(solver.test_nets),
                "backend": nccl.backend}
    except Exception as error:  # reported to the test, which names the rank
        return {"error": f"{type(error).__name__}: {error}"}
