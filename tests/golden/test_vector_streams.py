"""The vector streams keep their bits: compiled draws (golden/rng.py, golden/vector_kernels.py) give
exactly what numpy's calls gave, for every kind, and golden.streams serves them in any batching.

``PINNED`` holds SHA-256 digests (first 16 hex digits) of :func:`digests`' cases computed by the
generators as they were before the compiled draws (commit 2d44f85: numpy's ``Generator`` calls and
per-row Python loops; ``VectorStream`` then lived in ``cosim/vectors.py``).  To recompute them:
``git worktree add ../old 2d44f85 && mkdir -p ../old/tests/golden &&
cp tests/golden/test_vector_streams.py ../old/tests/golden/ && cd ../old &&
PYTHONPATH=$PWD python tests/golden/test_vector_streams.py`` (from the checkout's root), which prints
the table.  Each case calls
``random_operands`` twice on one generator and digests both results and the generator's final state,
so a draw consumed differently (even one that leaves the values alike) changes it.
"""

from __future__ import annotations

import functools
import hashlib
import json

import numpy as np
import pytest

import golden
import golden.vectors as gv
from golden.vectors import KINDS, random_bits, random_operands, random_values

try:
    from golden.streams import BLOCK, VectorStream
except ImportError:                      # the tree the table was recorded on
    from cosim.vectors import BLOCK, VectorStream



@pytest.fixture(autouse=True)
def compiled_draws(monkeypatch):
    """The compiled draws (the suite's GOLDEN_BACKEND=numpy would keep the generators on numpy's calls)."""
    monkeypatch.setenv("GOLDEN_BACKEND", "numba")


INSTRS = [("hopper", "HMMA.16816.F32"), ("volta", "HMMA.884.F32.F16"), ("ada", "QMMA.16832.F32.E4M3.E4M3"),
          ("blackwell", "UTCQMMA.SF.F32.E2M1.E3M2.E8"), ("blackwell", "UTCQMMA.F16.E3M2.E2M3"),
          ("blackwell", "UTCOMMA.4X"), ("cdna3", "v_mfma_f32_16x16x32_fp8_bf8"),
          ("cdna3", "v_mfma_f32_32x32x4_xf32"), ("hopper", "DMMA.8x8x4"), ("cdna2", "v_mfma_f32_32x32x1_2b_f32"),
          ("cdna2", "v_mfma_f32_32x32x4bf16"), ("cdna3", "v_mfma_f32_16x16x8_xf32")]
FORMATS = ("f16", "bf16", "tf32", "f32", "f64", "e2m1", "e4m3fnuz", "ue8m0")


def digest(arrays, rng=None) -> str:
    """SHA-256 of arrays (dtype, shape, bytes; None as such) and of ``rng``'s state, 16 hex digits."""
    h = hashlib.sha256()
    for x in arrays:
        if x is None:
            h.update(b"none")
        else:
            x = np.ascontiguousarray(x)
            h.update(f"{x.dtype.str}{x.shape}".encode())
            h.update(x.tobytes())
    if rng is not None:
        s = rng.bit_generator.state
        h.update(f"{s['state']['state']} {s['state']['inc']} {s['has_uint32']} {s['uinteger']}".encode())
    return h.hexdigest()[:16]


def digests() -> dict[str, str]:
    """The pinned cases: every kind on twelve instructions (two seeds), the format-level generators,
    and a campaign-style stream that starts at block 3."""
    out = {}
    for arch, name in INSTRS:
        ins = golden.lookup(arch, name)
        for kind in KINDS:
            for seed in (1, 23):
                rng = np.random.default_rng(seed)
                first = random_operands(ins, 257, rng, kind)
                second = random_operands(ins, 3 if kind != "bits" else 1000, rng, kind)
                out[f"{arch} {name} {kind} {seed}"] = digest(first + second, rng)
    for fmt in FORMATS:
        rng = np.random.default_rng(5)
        out[f"random_bits {fmt}"] = digest([random_bits(fmt, (33, 7), rng)], rng)
        out[f"random_values {fmt}"] = digest([random_values(fmt, (33, 7), rng),
                                              random_values(fmt, 5, rng, spread=40, zeros=0.5)], rng)
    ins = golden.lookup("hopper", "HMMA.16816.F32")
    out["stream mixed 7 block 3"] = digest(VectorStream(ins, "mixed", 7, start_block=3).take(BLOCK + 10))
    return out


PINNED = {
    "hopper HMMA.16816.F32 bits 1": "52ace50e919d0109",
    "hopper HMMA.16816.F32 bits 23": "7201bbdb070afa41",
    "hopper HMMA.16816.F32 normal 1": "1507ce2e4620cfeb",
    "hopper HMMA.16816.F32 normal 23": "10da4549ce01bd5a",
    "hopper HMMA.16816.F32 mixed 1": "4194b860b0e68ff9",
    "hopper HMMA.16816.F32 mixed 23": "855d89684707c7a9",
    "hopper HMMA.16816.F32 structured 1": "6ceea99368e071a0",
    "hopper HMMA.16816.F32 structured 23": "f0d9ad1904c59c28",
    "hopper HMMA.16816.F32 all 1": "447e2df9194d0029",
    "hopper HMMA.16816.F32 all 23": "53f9c4571077b6db",
    "hopper HMMA.16816.F32 disputed 1": "22123a965c3f0d5e",
    "hopper HMMA.16816.F32 disputed 23": "fc873313fe2a88cf",
    "volta HMMA.884.F32.F16 bits 1": "7c3aae4425787bfa",
    "volta HMMA.884.F32.F16 bits 23": "5662c895a1dedb06",
    "volta HMMA.884.F32.F16 normal 1": "ccdc02bb6b0dd69d",
    "volta HMMA.884.F32.F16 normal 23": "6007aa0a46eefb61",
    "volta HMMA.884.F32.F16 mixed 1": "14ae34115b80726e",
    "volta HMMA.884.F32.F16 mixed 23": "95ebbbfa92bf16a1",
    "volta HMMA.884.F32.F16 structured 1": "24e3840603b27f80",
    "volta HMMA.884.F32.F16 structured 23": "052f682aa476d7e3",
    "volta HMMA.884.F32.F16 all 1": "8a2168cc889e547b",
    "volta HMMA.884.F32.F16 all 23": "79cf558aa9fc17d2",
    "volta HMMA.884.F32.F16 disputed 1": "4e8cdedda642cad6",
    "volta HMMA.884.F32.F16 disputed 23": "8ed29074b6efd9dd",
    "ada QMMA.16832.F32.E4M3.E4M3 bits 1": "a991f539d236d374",
    "ada QMMA.16832.F32.E4M3.E4M3 bits 23": "99f4ad7ce0524b15",
    "ada QMMA.16832.F32.E4M3.E4M3 normal 1": "8b6ac65f0f9ef75e",
    "ada QMMA.16832.F32.E4M3.E4M3 normal 23": "b17074114adb4d20",
    "ada QMMA.16832.F32.E4M3.E4M3 mixed 1": "3c2f0f4132e73204",
    "ada QMMA.16832.F32.E4M3.E4M3 mixed 23": "3954352179575f35",
    "ada QMMA.16832.F32.E4M3.E4M3 structured 1": "06b32e19481c9647",
    "ada QMMA.16832.F32.E4M3.E4M3 structured 23": "2caa098da1049668",
    "ada QMMA.16832.F32.E4M3.E4M3 all 1": "5094116f1b21458a",
    "ada QMMA.16832.F32.E4M3.E4M3 all 23": "15e62919cd45d59a",
    "ada QMMA.16832.F32.E4M3.E4M3 disputed 1": "966e905925a97d27",
    "ada QMMA.16832.F32.E4M3.E4M3 disputed 23": "752498df3dbb9f4a",
    "blackwell UTCQMMA.SF.F32.E2M1.E3M2.E8 bits 1": "1c04428832031e7d",
    "blackwell UTCQMMA.SF.F32.E2M1.E3M2.E8 bits 23": "3adf860b1527fb08",
    "blackwell UTCQMMA.SF.F32.E2M1.E3M2.E8 normal 1": "4b1299bcc5063ddf",
    "blackwell UTCQMMA.SF.F32.E2M1.E3M2.E8 normal 23": "19a25e6e55bd0f50",
    "blackwell UTCQMMA.SF.F32.E2M1.E3M2.E8 mixed 1": "93a41545300a9195",
    "blackwell UTCQMMA.SF.F32.E2M1.E3M2.E8 mixed 23": "75f7b963176bf74c",
    "blackwell UTCQMMA.SF.F32.E2M1.E3M2.E8 structured 1": "dd94b44a7f34452c",
    "blackwell UTCQMMA.SF.F32.E2M1.E3M2.E8 structured 23": "737c9339cffffcde",
    "blackwell UTCQMMA.SF.F32.E2M1.E3M2.E8 all 1": "2887f10acf0189c5",
    "blackwell UTCQMMA.SF.F32.E2M1.E3M2.E8 all 23": "7fbbce6b9ea9fea1",
    "blackwell UTCQMMA.SF.F32.E2M1.E3M2.E8 disputed 1": "378cce4c95677dbb",
    "blackwell UTCQMMA.SF.F32.E2M1.E3M2.E8 disputed 23": "55dac3db790128a7",
    "blackwell UTCQMMA.F16.E3M2.E2M3 bits 1": "3474cca8ac0bd6cb",
    "blackwell UTCQMMA.F16.E3M2.E2M3 bits 23": "4138b43f16615efb",
    "blackwell UTCQMMA.F16.E3M2.E2M3 normal 1": "ee1426da8c6dd64b",
    "blackwell UTCQMMA.F16.E3M2.E2M3 normal 23": "eab85532149c6bd3",
    "blackwell UTCQMMA.F16.E3M2.E2M3 mixed 1": "a55c36813265a0f6",
    "blackwell UTCQMMA.F16.E3M2.E2M3 mixed 23": "06da8d44d45e1336",
    "blackwell UTCQMMA.F16.E3M2.E2M3 structured 1": "ae288bf6e6529bc1",
    "blackwell UTCQMMA.F16.E3M2.E2M3 structured 23": "88a43ec76a12052b",
    "blackwell UTCQMMA.F16.E3M2.E2M3 all 1": "00e35b0e74945769",
    "blackwell UTCQMMA.F16.E3M2.E2M3 all 23": "b167115e1d19dcd7",
    "blackwell UTCQMMA.F16.E3M2.E2M3 disputed 1": "0ab65b38f785a135",
    "blackwell UTCQMMA.F16.E3M2.E2M3 disputed 23": "e2cc3f18c2eb0de9",
    "blackwell UTCOMMA.4X bits 1": "07caee7133bcc59e",
    "blackwell UTCOMMA.4X bits 23": "3d5af3fdce41475e",
    "blackwell UTCOMMA.4X normal 1": "57a6e1c1913319ae",
    "blackwell UTCOMMA.4X normal 23": "9df9aff107f4f580",
    "blackwell UTCOMMA.4X mixed 1": "e9c53b91c3944659",
    "blackwell UTCOMMA.4X mixed 23": "61b67ff62ffb805a",
    "blackwell UTCOMMA.4X structured 1": "8219e0e18d3ebd2f",
    "blackwell UTCOMMA.4X structured 23": "8f80800e28d39520",
    "blackwell UTCOMMA.4X all 1": "a6114e578332157d",
    "blackwell UTCOMMA.4X all 23": "e05b74d2d24537a0",
    "blackwell UTCOMMA.4X disputed 1": "2de3a176b4b2c7e3",
    "blackwell UTCOMMA.4X disputed 23": "e3ff01ee3d468fc7",
    "cdna3 v_mfma_f32_16x16x32_fp8_bf8 bits 1": "a991f539d236d374",
    "cdna3 v_mfma_f32_16x16x32_fp8_bf8 bits 23": "99f4ad7ce0524b15",
    "cdna3 v_mfma_f32_16x16x32_fp8_bf8 normal 1": "ded65b0f1de0857e",
    "cdna3 v_mfma_f32_16x16x32_fp8_bf8 normal 23": "fa51b82178923681",
    "cdna3 v_mfma_f32_16x16x32_fp8_bf8 mixed 1": "9e127c0d8431fe55",
    "cdna3 v_mfma_f32_16x16x32_fp8_bf8 mixed 23": "da36f66f403f401a",
    "cdna3 v_mfma_f32_16x16x32_fp8_bf8 structured 1": "cae3bfcedad311b3",
    "cdna3 v_mfma_f32_16x16x32_fp8_bf8 structured 23": "5ab8dd9371f8b020",
    "cdna3 v_mfma_f32_16x16x32_fp8_bf8 all 1": "bb0e7b4056f4e057",
    "cdna3 v_mfma_f32_16x16x32_fp8_bf8 all 23": "d8dd98c7ae1f4bcb",
    "cdna3 v_mfma_f32_16x16x32_fp8_bf8 disputed 1": "00ad6b9c7f95690d",
    "cdna3 v_mfma_f32_16x16x32_fp8_bf8 disputed 23": "67e1d0716c634fed",
    "cdna3 v_mfma_f32_32x32x4_xf32 bits 1": "3f50880e6952910f",
    "cdna3 v_mfma_f32_32x32x4_xf32 bits 23": "d6d370e67b5dd2ac",
    "cdna3 v_mfma_f32_32x32x4_xf32 normal 1": "5ac3dc8573a77d94",
    "cdna3 v_mfma_f32_32x32x4_xf32 normal 23": "c21cc36cba595952",
    "cdna3 v_mfma_f32_32x32x4_xf32 mixed 1": "6068fd8a90a4dc03",
    "cdna3 v_mfma_f32_32x32x4_xf32 mixed 23": "e234be7d08166292",
    "cdna3 v_mfma_f32_32x32x4_xf32 structured 1": "43cfc46db3c64cd7",
    "cdna3 v_mfma_f32_32x32x4_xf32 structured 23": "03556b76f3d59185",
    "cdna3 v_mfma_f32_32x32x4_xf32 all 1": "1248c78c15f8ce91",
    "cdna3 v_mfma_f32_32x32x4_xf32 all 23": "d16c6f1f8e7b22fa",
    "cdna3 v_mfma_f32_32x32x4_xf32 disputed 1": "dcbf457da585243d",
    "cdna3 v_mfma_f32_32x32x4_xf32 disputed 23": "ad66c80126454a25",
    "hopper DMMA.8x8x4 bits 1": "f75460efde0b13e0",
    "hopper DMMA.8x8x4 bits 23": "861e5dd4676467de",
    "hopper DMMA.8x8x4 normal 1": "2c638f5b3940837b",
    "hopper DMMA.8x8x4 normal 23": "8890c1fb9ab46e60",
    "hopper DMMA.8x8x4 mixed 1": "a80931223cef268e",
    "hopper DMMA.8x8x4 mixed 23": "573edc9e63a99d06",
    "hopper DMMA.8x8x4 structured 1": "acfcd21796ff8da2",
    "hopper DMMA.8x8x4 structured 23": "c2ca2707c95e5491",
    "hopper DMMA.8x8x4 all 1": "3cfe6e88856ff47e",
    "hopper DMMA.8x8x4 all 23": "d4d25c5970d204d4",
    "hopper DMMA.8x8x4 disputed 1": "c55c1a704771814d",
    "hopper DMMA.8x8x4 disputed 23": "ffa78fa832d4042c",
    "cdna2 v_mfma_f32_32x32x1_2b_f32 bits 1": "bb4ae73fa0466d84",
    "cdna2 v_mfma_f32_32x32x1_2b_f32 bits 23": "54b08919d4a0edc2",
    "cdna2 v_mfma_f32_32x32x1_2b_f32 normal 1": "2959865da67cb01e",
    "cdna2 v_mfma_f32_32x32x1_2b_f32 normal 23": "4be71e452817b880",
    "cdna2 v_mfma_f32_32x32x1_2b_f32 mixed 1": "f9a1cc6d7a04cd33",
    "cdna2 v_mfma_f32_32x32x1_2b_f32 mixed 23": "66113961a29869c5",
    "cdna2 v_mfma_f32_32x32x1_2b_f32 structured 1": "3994510689925015",
    "cdna2 v_mfma_f32_32x32x1_2b_f32 structured 23": "9f6d9202e3fc3198",
    "cdna2 v_mfma_f32_32x32x1_2b_f32 all 1": "447103e88d37021e",
    "cdna2 v_mfma_f32_32x32x1_2b_f32 all 23": "986e54562f3a06c3",
    "cdna2 v_mfma_f32_32x32x1_2b_f32 disputed 1": "cec191c7c32a2aa8",
    "cdna2 v_mfma_f32_32x32x1_2b_f32 disputed 23": "e11f9a6c8deb2bd2",
    "cdna2 v_mfma_f32_32x32x4bf16 bits 1": "566f70e99723e1ab",
    "cdna2 v_mfma_f32_32x32x4bf16 bits 23": "bf026075fd0e3517",
    "cdna2 v_mfma_f32_32x32x4bf16 normal 1": "997874a16720047a",
    "cdna2 v_mfma_f32_32x32x4bf16 normal 23": "83647c645cec07d7",
    "cdna2 v_mfma_f32_32x32x4bf16 mixed 1": "54ae56380b7833f4",
    "cdna2 v_mfma_f32_32x32x4bf16 mixed 23": "a251d052d89d6ad0",
    "cdna2 v_mfma_f32_32x32x4bf16 structured 1": "c1c23377efbad9aa",
    "cdna2 v_mfma_f32_32x32x4bf16 structured 23": "ff4af72fa95f54cd",
    "cdna2 v_mfma_f32_32x32x4bf16 all 1": "a60b7c8518ae190c",
    "cdna2 v_mfma_f32_32x32x4bf16 all 23": "eccc4204cd1bcae8",
    "cdna2 v_mfma_f32_32x32x4bf16 disputed 1": "fd8b2e0e4dd19419",
    "cdna2 v_mfma_f32_32x32x4bf16 disputed 23": "ed16751359e260e5",
    "cdna3 v_mfma_f32_16x16x8_xf32 bits 1": "461ae8a2258d47b3",
    "cdna3 v_mfma_f32_16x16x8_xf32 bits 23": "c9a224d16f828460",
    "cdna3 v_mfma_f32_16x16x8_xf32 normal 1": "14b0f46b3eb1304b",
    "cdna3 v_mfma_f32_16x16x8_xf32 normal 23": "bec0187a939bd906",
    "cdna3 v_mfma_f32_16x16x8_xf32 mixed 1": "040903d0acd22483",
    "cdna3 v_mfma_f32_16x16x8_xf32 mixed 23": "ed22755b0a97ff95",
    "cdna3 v_mfma_f32_16x16x8_xf32 structured 1": "6c7064a8edea2292",
    "cdna3 v_mfma_f32_16x16x8_xf32 structured 23": "2f5dc786d6629f01",
    "cdna3 v_mfma_f32_16x16x8_xf32 all 1": "5b9e51b5515642b1",
    "cdna3 v_mfma_f32_16x16x8_xf32 all 23": "a44b8daab5684ff6",
    "cdna3 v_mfma_f32_16x16x8_xf32 disputed 1": "8c5119642c7452df",
    "cdna3 v_mfma_f32_16x16x8_xf32 disputed 23": "b99f7f0e14c3b8ef",
    "random_bits f16": "1d966e72bbd01094",
    "random_values f16": "c341111260981105",
    "random_bits bf16": "1d966e72bbd01094",
    "random_values bf16": "7e7f564a9f151a75",
    "random_bits tf32": "cb4b6032451bbe44",
    "random_values tf32": "bb3444b8c8783b09",
    "random_bits f32": "cb4b6032451bbe44",
    "random_values f32": "38ea1301bc86671a",
    "random_bits f64": "fb0b0dee07f28aac",
    "random_values f64": "bbf44e3ab67abac1",
    "random_bits e2m1": "d8d49c990da46cd4",
    "random_values e2m1": "f077040377db09b9",
    "random_bits e4m3fnuz": "1336a9b22b6c0d92",
    "random_values e4m3fnuz": "43814074536ba823",
    "random_bits ue8m0": "1336a9b22b6c0d92",
    "random_values ue8m0": "0a6ae080d6a7993e",
    "stream mixed 7 block 3": "741eeea4b3e64b04",}


def mismatched(got: dict[str, str]) -> list[str]:
    return [k for k in PINNED if got.get(k) != PINNED[k]]


def test_streams_bit_identical_to_the_recorded_generators():
    assert mismatched(digests()) == []


def test_pinned_digests_catch_a_planted_fault(monkeypatch):
    """One bit of one normal value changed: the digests see it."""
    vk = gv._kernels()
    fill = vk.fill_values

    def faulty(st, out, *args):
        fill(st, out, *args)
        out[0] ^= np.uint64(1)
    monkeypatch.setattr(vk, "fill_values", faulty)
    bad = mismatched(digests())
    assert bad and all("bits" not in k.split() for k in bad)


def _both_paths(monkeypatch, fn):
    """``fn()`` with compiled draws, then with numpy's calls (``golden.vectors._state`` off)."""
    new = fn()
    with monkeypatch.context() as m:
        m.setattr(gv, "_state", lambda rng: None)
        old = fn()
    return new, old


@pytest.mark.parametrize("kind", KINDS)
def test_compiled_draws_equal_numpy_draws(monkeypatch, kind):
    """Fresh seeds and sizes (rows that draw nothing included), both paths, the same bits and state."""
    cases = [("hopper", "HMMA.16816.F32", 0), ("blackwell", "UTCOMMA.MXF4NVF4.E8.B16", 5),
             ("cdna3", "v_mfma_f32_16x16x16_bf16", 1), ("cdna2", "v_mfma_f32_16x16x4_f32", 2)]
    for arch, name, n in cases:
        ins = golden.lookup(arch, name)

        def run(ins=ins, n=n):
            rng = np.random.default_rng([KINDS.index(kind), n])
            return digest(random_operands(ins, n, rng, kind) + random_operands(ins, 611, rng, kind), rng)
        new, old = _both_paths(monkeypatch, run)
        assert new == old, (name, kind)


def test_a_skipped_state_store_is_caught(monkeypatch):
    """The comparison above sees draws that do not advance the generator (a planted fault)."""
    ins = golden.lookup("hopper", "HMMA.16816.F32")

    def run():
        rng = np.random.default_rng(4)
        return digest(random_operands(ins, 100, rng, "structured"), rng)
    good = run()
    monkeypatch.setattr(gv, "_store", lambda rng, st: None)
    assert run() != good


def test_other_bit_generators_use_numpy_calls():
    """MT19937 is not emulated: numpy's own calls serve it (the same values as before)."""
    ins = golden.lookup("hopper", "HMMA.16816.F32")
    a = random_operands(ins, 50, np.random.Generator(np.random.MT19937(3)), "mixed")
    b = random_operands(ins, 50, np.random.Generator(np.random.MT19937(3)), "mixed")
    assert all(np.array_equal(x, y) for x, y in zip(a, b))
    assert gv._state(np.random.Generator(np.random.MT19937(3))) is None
    assert gv._state(np.random.default_rng(3)) is not None


def test_golden_backend_numpy_keeps_numpy_calls(monkeypatch):
    """GOLDEN_BACKEND=numpy keeps the generators off numba, with the same values."""
    ins = golden.lookup("cdna3", "v_mfma_f32_32x32x8_f16")
    want = random_operands(ins, 200, np.random.default_rng(6), "all")
    monkeypatch.setenv("GOLDEN_BACKEND", "numpy")
    assert gv._state(np.random.default_rng(3)) is None
    got = random_operands(ins, 200, np.random.default_rng(6), "all")
    assert all(np.array_equal(x, y) for x, y in zip(want, got))


@functools.cache
def _interleaved_draws():
    """A compiled loop of the three kinds of draw, interleaved (cached on disk like the kernels)."""
    from numba import njit

    from golden import rng as R

    @njit(cache=True)
    def draws(st, n, lo, hi):
        s = R.unpack(st)
        a, b, c = np.empty(n, np.int64), np.empty(n), np.empty(n, np.uint64)
        for i in range(n):
            a[i], s = R.integers(s, lo, hi)
            b[i], s = R.random(s)
            c[i], s = R.next32(s)
        R.pack(st, s)
        return a, b, c
    return draws


def test_rng_draws_are_numpys():
    """Each compiled draw against numpy's call, interleaved so the kept 32-bit half is exercised;
    ranges with rejections (near 2**32) and 64-bit ones included."""
    from golden import rng as R
    draws = _interleaved_draws()
    for seed in range(3):
        g = np.random.default_rng(seed)
        g.integers(0, 3)
        st = R.load(g)
        assert np.array_equal(R.raw(st, 999), g.bit_generator.random_raw(999))
        for lo, hi in ((0, 3), (-5, 300), (0, 3_000_000_000), (0, 1 << 40), (7, 8), (0, 1 << 32),
                       (-(1 << 62), 1 << 62)):
            a, b, c = draws(st, 200, lo, hi)
            want = [(g.integers(lo, hi), g.random(), g.integers(0, 1 << 32, dtype=np.uint64)) for _ in range(200)]
            assert np.array_equal(a, [w[0] for w in want]) and np.array_equal(b, [w[1] for w in want])
            assert np.array_equal(c, [w[2] for w in want]), (lo, hi)
        h = np.random.default_rng(99)
        R.store(h, st)
        assert h.bit_generator.state == g.bit_generator.state


def test_out_arrays_not_contiguous():
    """Generators fill arrays given to them, contiguous or not, with the values they would return."""
    ins = golden.lookup("blackwell", "UTCOMMA.4X")
    for kind in KINDS:
        want = random_operands(ins, 300, np.random.default_rng(8), kind)
        big = [None if x is None else np.zeros((x.shape[0], 2 * x.shape[1]) if x.ndim == 2 else 2 * x.shape[0],
                                               np.uint64) for x in want]
        views = tuple(None if x is None else (x[:, ::2] if x.ndim == 2 else x[::2]) for x in big)
        got = random_operands(ins, 300, np.random.default_rng(8), kind, out=views)
        assert all(np.array_equal(x, y) for x, y in zip(want, got)), kind
        assert all(x is None or not x[..., 1::2].any() for x in big), kind


def test_out_arrays_checked():
    ins = golden.lookup("blackwell", "UTCOMMA.4X")
    rng = np.random.default_rng(1)
    out = gv.empty_operands(ins, 10)
    with pytest.raises(ValueError, match=r"out must be a uint64 or uint8 array of shape \(10, 64\)"):
        random_operands(ins, 10, rng, "bits", out=(np.zeros((10, 63), np.uint64),) + out[1:])
    with pytest.raises(ValueError, match="out's scale_a must be an array"):
        random_operands(ins, 10, rng, "bits", out=out[:3] + (None, None))
    with pytest.raises(ValueError, match="uint64 or uint16 array of shape"):
        random_bits("f16", 7, rng, out=np.zeros(7, np.int64))


def test_vector_stream_independent_of_batching():
    ins = golden.lookup("blackwell", "UTCQMMA.SF.F32.E2M1.E3M2.E8")
    whole = VectorStream(ins, "mixed", seed=3).take(20000)
    s = VectorStream(ins, "mixed", seed=3)
    parts = [s.take(k) for k in (1, 8191, 5000, 6808)]
    for i, x in enumerate(whole):
        assert np.array_equal(x, np.concatenate([p[i] for p in parts]))
    later = VectorStream(ins, "mixed", seed=3, start_block=2).take(100)
    assert all(np.array_equal(x[2 * BLOCK:2 * BLOCK + 100], y) for x, y in zip(whole, later))
    # a generator of one's own is cut and joined: the same vectors as golden's drawn in place
    own = VectorStream(ins, lambda ins, n, rng: random_operands(ins, n, rng, "mixed"), seed=3)
    assert all(np.array_equal(x, y) for x, y in zip(whole, own.take(20000)))
    from golden.streams import resolve
    with pytest.raises(ValueError, match="unknown vector generator"):
        resolve("nonsense")
    assert resolve("golden.vectors:random_operands") is golden.vectors.random_operands


def test_bench_prints_every_kind(capsys):
    """make bench's generator table: a row per kind, and the word rates that bound them."""
    from golden import bench
    bench.generators_table([golden.lookup("cdna2", "v_mfma_f32_32x32x4bf16")], 200, 1)
    out = capsys.readouterr().out
    assert "PCG64 words/s" in out
    rows = [line.split() for line in out.splitlines() if line.startswith("cdna2")]
    assert [r[2] for r in rows] == list(KINDS)


if __name__ == "__main__":
    print(json.dumps(digests(), indent=0))
