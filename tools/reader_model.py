"""The reader: a cross-encoder that reads a question together with one passage.

The packaged all-MiniLM-L6-v2 encoder, cut to its first layers, with a mean-pooled linear head
(the packaged model was trained with mean pooling) giving one logit per (question, passage).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

__all__ = ["MAX_TOKENS", "Scorer", "make_model"]

# Question and passage together are cut to this many tokens (news paragraphs are far shorter).
MAX_TOKENS = 128


def make_model(layers: int, source: str | None = None) -> Any:
    """The reader: the packaged encoder cut to `layers` layers, a mean-pooled linear head."""
    import torch
    from transformers import AutoModel

    from index.embedding.embedder import default_model_path

    class Reader(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.encoder = AutoModel.from_pretrained(source or default_model_path())
            self.encoder.encoder.layer = self.encoder.encoder.layer[:layers]
            self.encoder.config.num_hidden_layers = layers
            self.head = torch.nn.Linear(self.encoder.config.hidden_size, 1)

        def forward(self, input_ids: Any, attention_mask: Any, token_type_ids: Any) -> Any:
            hidden = self.encoder(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
            ).last_hidden_state
            mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
            pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1.0)
            return self.head(pooled).squeeze(-1)

    return Reader()


class Scorer:
    """A trained reader from a checkpoint: logits for (question, passage) pairs."""

    def __init__(self, checkpoint: Path, threads: int, device: str = "cpu") -> None:
        import torch
        from transformers import AutoTokenizer

        from index.embedding.embedder import default_model_path

        state = torch.load(checkpoint, map_location=device, weights_only=False)
        self.torch = torch
        self.device = torch.device(device)
        self.tokenizer = AutoTokenizer.from_pretrained(default_model_path())
        self.model = make_model(state["args"]["layers"]).to(self.device)
        self.model.load_state_dict(state["model"])
        self.model.eval()
        self.pairs = state["pairs"]
        torch.set_num_threads(threads)

    def __call__(self, question: str, passages: Sequence[str]) -> list[float]:
        if not passages:
            return []
        encoded = self.tokenizer(
            [question] * len(passages),
            list(passages),
            truncation="only_second",
            max_length=MAX_TOKENS,
            padding=True,
            return_tensors="pt",
        ).to(self.device)
        with self.torch.inference_mode():
            return [float(x) for x in self.model(**encoded)]
