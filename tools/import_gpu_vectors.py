"""Convert the measured GPU dot-add sets (text, one dot-add per line) into tests/data/gpu_vectors/*.npz.

Usage: python tools/import_gpu_vectors.py SOURCE_DIR [DEST_DIR]

SOURCE_DIR is the `vectors/gpu` folder of the project's shared inputs
(layout GPU/FORMAT/{a,b}_GPU_FORMAT.txt, c_GPU_fp32.txt, d_GPU_fp32.txt,
d_GPU_fp16.txt).  Operands are stored in their own format's bits (each f32
word is converted exactly; the import fails if one is not representable),
c and d as f32 words.  The project reads only the converted copies.
"""

import shutil
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from golden.formats import from_float, to_float  # noqa: E402
from golden.rules import Rounding  # noqa: E402

FORMAT_OF = {"fp16": "f16", "bf16": "bf16", "tf32": "tf32", "E4M3": "e4m3", "E5M2": "e5m2"}


def read_hex(path):
    return np.array([[int(w, 16) for w in line.split()] for line in path.read_text().split("\n") if line.strip()],
                    np.uint32)


def read_bin(path):
    return np.array([int(line, 2) for line in path.read_text().split() if line.strip()], np.uint32)


def convert(src: Path, dst: Path):
    dst.mkdir(parents=True, exist_ok=True)
    for setdir in sorted(p for p in src.glob("*/*") if p.is_dir()):
        gpu, fmt_dir = setdir.parent.name, setdir.name
        fmt = FORMAT_OF[fmt_dir]
        out = {}
        for op in ("a", "b"):
            words = read_hex(setdir / f"{op}_{gpu}_{fmt_dir}.txt")
            if fmt == "tf32":
                bits = words
            else:
                vals = words.view(np.float32).astype(np.float64)
                bits = from_float(fmt, vals, Rounding.RNE)
                back = to_float(fmt, bits)
                assert ((back == vals) | (np.isnan(back) & np.isnan(vals))).all(), f"{setdir}: {op} not exact"
            out[op] = bits
        out["c"] = read_bin(setdir / f"c_{gpu}_fp32.txt")
        for width in ("fp32", "fp16"):
            f = setdir / f"d_{gpu}_{width}.txt"
            if f.exists():
                out[f"d_{width}"] = read_bin(f)
        np.savez_compressed(dst / f"{gpu}_{fmt_dir}.npz", **out)
        print(f"{gpu}/{fmt_dir}: {len(out['c'])} dot-adds, K={out['a'].shape[1]}, d: "
              f"{[k for k in out if k.startswith('d_')]}")
    for name in ("LICENCE", "README.md"):
        shutil.copy(src / name, dst / (name if name == "LICENCE" else "SOURCE_README.md"))


if __name__ == "__main__":
    convert(Path(sys.argv[1]), Path(sys.argv[2] if len(sys.argv) > 2 else "tests/data/gpu_vectors"))
