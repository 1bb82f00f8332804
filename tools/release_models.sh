#!/usr/bin/env bash
# The models a release carries and the website runs: the Multi30k recipe trained here (its hour on a CPU), its best
# weights on validation (last.pt or a mean of its last snapshots, as `average` chooses), exported four ways, each
# directory with its model card and test_2016_flickr BLEU:
#   models/de-en       safetensors and JSON (`translate --model`, `Translator.from_pretrained`, `make docs MODEL=...`)
#   models/de-en-ct2   CTranslate2, 8-bit weights
#   models/de-en-onnx  ONNX, 8-bit weights, as the website's "Try it" page runs it
#   models/de-en-hf    MarianMT for Hugging Face's transformers (`AutoModelForSeq2SeqLM`), float32
# and each as a .tar.gz beside it. TRAIN_OPTIONS adds options to `train` (a quick check: TRAIN_OPTIONS="--steps 20").
set -euo pipefail
make install
at=.venv/bin/annotated-transformer
$at train multi30k --out runs/multi30k ${TRAIN_OPTIONS:-}
$at average runs/multi30k
$at export runs/multi30k --out models/de-en --score
$at export runs/multi30k --out models/de-en-ct2 --format ctranslate2 --quantization int8 --score
$at export runs/multi30k --out models/de-en-onnx --format onnx --quantization int8 --score
$at export runs/multi30k --out models/de-en-hf --format transformers --score
for model in de-en de-en-ct2 de-en-onnx de-en-hf; do
  tar czf "models/$model.tar.gz" -C models "$model"
done
