"""Sentence embeddings: the only package that imports sentence-transformers or onnxruntime."""

import os

# Models load from local folders only; this keeps huggingface_hub from trying the network.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
