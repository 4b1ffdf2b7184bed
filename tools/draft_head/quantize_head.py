"""Quantizes a trained draft head's matrices (fc and its block's projections) to MLX's
affine format, as mlx-lm stores quantized models, so drafting reads a quarter of the
bytes; norms stay float16 and d2t as it is. The config gains mlx-lm's "quantization".

    .venv/bin/python tools/draft_head/quantize_head.py HEAD_DIR OUT_DIR [--bits 8] [--group-size 64]
"""

import argparse
import json
import os
import shutil

import mlx.core as mx


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("head")
    parser.add_argument("out")
    parser.add_argument("--bits", type=int, default=8)
    parser.add_argument("--group-size", type=int, default=64)
    args = parser.parse_args()

    tensors = mx.load(os.path.join(args.head, "model.safetensors"))
    out = {}
    for name, tensor in tensors.items():
        if name.endswith(".weight") and tensor.ndim == 2:
            prefix = name[: -len(".weight")]
            weight, scales, biases = mx.quantize(tensor, group_size=args.group_size, bits=args.bits)
            out[prefix + ".weight"] = weight
            out[prefix + ".scales"] = scales
            out[prefix + ".biases"] = biases
        else:
            out[name] = tensor
    os.makedirs(args.out, exist_ok=True)
    mx.save_safetensors(os.path.join(args.out, "model.safetensors"), out)
    with open(os.path.join(args.head, "config.json")) as f:
        config = json.load(f)
    config["quantization"] = {"group_size": args.group_size, "bits": args.bits}
    with open(os.path.join(args.out, "config.json"), "w") as f:
        json.dump(config, f, indent=2, sort_keys=True)
        f.write("\n")
    training = os.path.join(args.head, "training.json")
    if os.path.exists(training) and os.path.abspath(args.head) != os.path.abspath(args.out):
        shutil.copy(training, os.path.join(args.out, "training.json"))


if __name__ == "__main__":
    main()
