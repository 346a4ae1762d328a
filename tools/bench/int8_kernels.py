"""How fast this CPU multiplies matrices in fp32 and in int8, through ONNX Runtime, on one core.

    .venv/bin/python -m tools.bench.int8_kernels

The model's time is almost all matrix products (about 85% in an ONNX Runtime profile), so
these figures bound how fast any backend can embed here: int8 pays only where the CPU has
instructions that multiply 8-bit numbers faster than it multiplies floats (VNNI, ARM dot
products). The shape is all-MiniLM-L6-v2's feed-forward layer over 512 tokens. Prints one JSON
line: giga-operations per second for each kind, and their ratio.
"""

from __future__ import annotations

import json
import time

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

TOKENS, HIDDEN, FEED_FORWARD = 512, 384, 1536


def session(graph: onnx.GraphProto) -> ort.InferenceSession:
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    return ort.InferenceSession(model.SerializeToString(), options, ["CPUExecutionProvider"])


def giga_ops(run: ort.InferenceSession, feed: dict[str, np.ndarray], seconds: float = 3) -> float:
    run.run(None, feed)
    started, calls = time.perf_counter(), 0
    while time.perf_counter() - started < seconds:
        run.run(None, feed)
        calls += 1
    per_call = (time.perf_counter() - started) / calls
    return 2 * TOKENS * HIDDEN * FEED_FORWARD / per_call / 1e9


def fp32() -> float:
    weights = np.random.default_rng(0).standard_normal((HIDDEN, FEED_FORWARD), np.float32)
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["y"])],
        "fp32",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [TOKENS, HIDDEN])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [TOKENS, FEED_FORWARD])],
        [numpy_helper.from_array(weights, "w")],
    )
    x = np.random.default_rng(1).standard_normal((TOKENS, HIDDEN), np.float32)
    return giga_ops(session(graph), {"x": x})


def int8() -> float:
    """uint8 activations times int8 weights, as dynamic quantization runs the model."""
    rng = np.random.default_rng(0)
    weights = rng.integers(-127, 128, (HIDDEN, FEED_FORWARD), dtype=np.int8)
    graph = helper.make_graph(
        [helper.make_node("MatMulInteger", ["x", "w", "x_zero", "w_zero"], ["y"])],
        "int8",
        [helper.make_tensor_value_info("x", TensorProto.UINT8, [TOKENS, HIDDEN])],
        [helper.make_tensor_value_info("y", TensorProto.INT32, [TOKENS, FEED_FORWARD])],
        [
            numpy_helper.from_array(weights, "w"),
            numpy_helper.from_array(np.array(128, np.uint8), "x_zero"),
            numpy_helper.from_array(np.array(0, np.int8), "w_zero"),
        ],
    )
    x = rng.integers(0, 256, (TOKENS, HIDDEN), dtype=np.uint8)
    return giga_ops(session(graph), {"x": x})


def main() -> None:
    f, i = fp32(), int8()
    print(
        json.dumps(
            {
                "shape": [TOKENS, HIDDEN, FEED_FORWARD],
                "fp32_gops": round(f, 1),
                "int8_gops": round(i, 1),
                "int8_over_fp32": round(i / f, 2),
                "onnxruntime": ort.__version__,
            }
        )
    )


if __name__ == "__main__":
    main()
