"""Whether an int8 export computes the same embeddings on an AVX2-only CPU as on this one.

    .venv/bin/python -m tools.bench.int8_across_cpus EXPORT_FOLDER [EXPORT_FOLDER ...]

An export folder is one under the model cache (`~/.cache/articlebot/`). ONNX Runtime picks its
int8 kernels from the CPU it runs on, so running the `avx2` file on an AVX-512 machine does not
run AVX2's kernels. This runs each export twice: natively, and under `qemu-x86_64 -cpu Haswell`
(Debian's qemu-user), which reports a CPU with AVX2 and no AVX-512, so ONNX Runtime takes its
AVX2 kernels. It embeds the paragraphs and questions of the test articles both ways and prints,
per export, the largest difference of any coordinate and the lowest cosine between the two
runs.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]  # the checkout
QUESTIONS = [
    "How much did the council approve for the renovation?",
    "When did the flood reach the town?",
    "Who counted the trees in the forest?",
    "how much was the deposit",
]


def texts() -> list[str]:
    out = list(QUESTIONS)
    for name in ("flood-story.txt", "forest-article.txt"):
        body = (ROOT / "tests" / "data" / name).read_text(encoding="utf-8")
        out += [p.strip() for p in body.split("\n\n") if p.strip()]
    return out


def emit(folder: Path, out: Path) -> None:
    from index.embedding.embedder import OnnxEmbedder

    embedder = OnnxEmbedder(folder, folder.name)
    np.save(out, embedder.encode_documents(texts()))


def main(folders: list[str]) -> int:
    qemu = shutil.which("qemu-x86_64")
    if qemu is None:
        print("needs qemu-x86_64 (apt-get install qemu-user)", file=sys.stderr)
        return 2
    for name in folders:
        folder = Path(name).resolve()
        with tempfile.TemporaryDirectory() as tmp:
            native, avx2 = Path(tmp) / "native.npy", Path(tmp) / "avx2.npy"
            me = [sys.executable, "-m", "tools.bench.int8_across_cpus", "--emit", str(folder)]
            # `-m tools...` finds the module from the checkout, wherever this was started.
            subprocess.run([*me, str(native)], check=True, cwd=ROOT)
            subprocess.run(
                [qemu, "-cpu", "Haswell", *me, str(avx2)],
                check=True,
                stderr=subprocess.DEVNULL,
                cwd=ROOT,
            )
            a, b = np.load(native), np.load(avx2)
        cosines = np.sum(a * b, axis=1) / np.linalg.norm(a, axis=1) / np.linalg.norm(b, axis=1)
        print(
            json.dumps(
                {
                    "export": folder.name,
                    "texts": len(a),
                    "max_abs_diff": float(np.abs(a - b).max()),
                    "min_cosine": round(float(cosines.min()), 6),
                }
            )
        )
    return 0


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--emit":
        emit(Path(sys.argv[2]), Path(sys.argv[3]))
    else:
        sys.exit(main(sys.argv[1:]))
