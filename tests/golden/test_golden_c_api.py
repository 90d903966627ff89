"""The C golden library's public API (golden_c/include/mma_golden.h, golden_c/src/api.c) and its
generated catalog (golden.c_library.catalog_source) against golden: the catalog is every entry the
compiled kernels model with the same facts; every name golden.lookup takes finds the same entry;
unknown names say what is valid; the tables built in C equal spec.build's; mma_golden_dot_add and
mma_golden_mma equal golden.dot_add and golden.mma bit for bit (a representative entry of each
algorithm family here, every entry under -m slow); instructions of your own made at run time
(mma_golden_from_spec, no rebuild) give golden's bits and are refused where golden refuses them; and a
C program linked against the built library prints what golden computes.

The library is golden.clib's cached build (build/golden-c/): compiled once, not per test."""

from __future__ import annotations

import shutil
import subprocess

import numpy as np
import pytest

import golden
from golden import c_library, clib
from golden.kernels import spec
from golden.vectors import KINDS, random_operands

ROWS = 64
SLOW_ROWS = 20_000

pytestmark = pytest.mark.skipif(shutil.which("cc") is None, reason="no C compiler (cc)")

HANDLED = [ins for ins in golden.CATALOG if c_library.supports(ins.datapath)]


def _family(ins) -> str:
    p = ins.params
    return f"{spec.kernel_code(p).name}{'-exact' if p.F == 'exact' else ''}{'-lowered' if p.operand_format else ''}" \
           f"{'-interleaved' if p.pass_interleave else ''}{'-scaled-' + ins.scale_format if ins.scale_format else ''}"


def _representatives():
    seen = {}
    for ins in HANDLED:
        seen.setdefault(_family(ins), ins)
    return seen


REPS = _representatives()


@pytest.fixture(scope="module")
def entries():
    return clib.c_entries()


def test_catalog_is_every_handled_entry(entries):
    assert HANDLED == list(golden.CATALOG)              # every entry of golden's catalog is in C
    assert [(e.arch, e.name) for e in entries] == [(i.arch, i.name) for i in HANDLED]
    for e, ins in zip(entries, HANDLED):
        assert (e.m, e.n, e.k, e.block, e.algorithm) == (ins.m, ins.n, ins.k, ins.block_size or 0, ins.algorithm)
        assert e.formats == (ins.a_format, ins.b_format, ins.c_format, ins.d_format, ins.scale_format)
        assert e.d_bytes == np.dtype(golden.get_format(ins.d_format).dtype).itemsize
    assert {spec.kernel_code(i.params) for i in REPS.values()} == set(clib.KERNELS)


def test_lookup_takes_golden_names():
    for ins in HANDLED:
        for name in (ins.name, ins.ptx, *ins.aliases, ins.name.lower()):
            want = golden.lookup(ins.arch, name)
            got = clib.c_lookup(ins.arch, name)
            assert (got.arch, got.name, got.m, got.n) == (want.arch, want.name, want.m, want.n), name
    for arch, name in (("h100", "HGMMA.64x128x16.F32"), ("sm_90", "wgmma.m64n256k16.f32.f16.f16"),
                       ("mi300x", "v_mfma_f32_32x32x8_f16"), ("hopper", "HMMA.16816")):
        try:
            want = golden.lookup(arch, name)
        except ValueError as e:
            with pytest.raises(ValueError, match="names"):
                clib.c_lookup(arch, name)
            assert "not one" in str(e)
            continue
        got = clib.c_lookup(arch, name)
        assert (got.arch, got.name, got.m, got.n) == (want.arch, want.name, want.m, want.n), name


def test_unknown_names_say_what_is_valid():
    valid = r"unknown instruction 'HGMMA\.nonsense' on hopper; valid: .*HGMMA\.64xNx16\.F32"
    with pytest.raises(ValueError, match=valid):
        clib.c_lookup("hopper", "HGMMA.nonsense")
    with pytest.raises(ValueError, match="unknown architecture 'hoper'; valid: volta, .*cdna3"):
        clib.c_lookup("hoper", "HMMA.16816.F32")
    with pytest.raises(ValueError, match="not available on volta; it exists on: .*hopper"):
        clib.c_lookup("volta", "HGMMA.64xNx16.F32")
    missing = [i for i in golden.CATALOG if i not in HANDLED]
    if missing:
        with pytest.raises(ValueError, match="no compiled kernel models it"):
            clib.c_lookup(missing[0].arch, missing[0].name)


def test_tables_built_in_c_equal_spec_build(entries):
    seen = set()
    for e, ins in zip(entries, HANDLED):
        dp = ins.datapath
        layout = (dp.formats, dp.scale_format, dp.params.operand_format)
        if layout in seen:
            continue
        seen.add(layout)
        _, vtab, etab, _ = c_library.build_design(dp)
        v, x = clib.c_tables(e)
        assert np.array_equal(v, vtab, equal_nan=True) and np.array_equal(x, etab), ins


def dot_add_mismatches(ins, n: int, seed: int = 0) -> int:
    c_ins = clib.c_lookup(ins.arch, ins.name)
    bad = 0
    for i, kind in enumerate(KINDS):
        a, b, c, sa, sb = random_operands(ins, n, np.random.default_rng([seed, i]), kind)
        want = golden.dot_add(ins, a, b, c, sa, sb)
        got = clib.c_dot_add(c_ins, a, b, c, sa, sb)
        assert got.dtype == want.dtype and got.shape == want.shape
        bad += int((got != want).sum())
    return bad


@pytest.mark.parametrize("family", sorted(REPS))
def test_dot_add_equals_golden(family):
    assert dot_add_mismatches(REPS[family], ROWS) == 0


def _tiles(ins, rng):
    M, N = ins.m, ins.n
    a, b, c, sa, sb = random_operands(ins, M * N, rng, "normal")
    A, B, C = a[:M], b[:N].T, c.reshape(M, N)          # A [M, K], B [K, N]
    sA = sB = None
    if ins.scale_format:
        sA, sB = sa[:M], sb[:N].T                       # [M, K / block], [K / block, N]
    return A, B, C, sA, sB


@pytest.mark.parametrize("family", sorted(REPS))
def test_mma_equals_golden(family):
    ins = REPS[family]
    ops = _tiles(ins, np.random.default_rng(7))
    want = golden.mma(ins, *ops)
    got = clib.c_mma(clib.c_lookup(ins.arch, ins.name), *ops)
    assert got.dtype == want.dtype and np.array_equal(got, want)


def test_mma_at_another_shape():
    ins = golden.lookup("hopper", "HGMMA.64x24x16.F32")
    c_ins = clib.c_lookup("hopper", "HGMMA.64xNx16.F32").with_shape(64, 24)
    assert (c_ins.m, c_ins.n) == (ins.m, ins.n) == (64, 24)
    ops = _tiles(ins, np.random.default_rng(5))
    assert np.array_equal(clib.c_mma(c_ins, *ops), golden.mma(ins, *ops))
    with pytest.raises(ValueError, match=r"shape M=64, N=7 is not valid; valid \(M, N\): \(64, 8\), \(64, 16\)"):
        c_ins.with_shape(64, 7)


CUSTOM = "k=16,m=4,n=8,a=e4m3,c=f32,scale=ue8m0,block=16,base=FDA,F=25,pass_size=16,e_zero=-133"


def test_an_instruction_of_your_own_compiled_in():
    ins = golden.lookup("custom", CUSTOM)
    c_ins = clib.c_lookup("custom", ins.name, custom=[CUSTOM])
    assert (c_ins.arch, c_ins.name, c_ins.m, c_ins.n, c_ins.k, c_ins.block) == ("custom", ins.name, 4, 8, 16, 16)
    a, b, c, sa, sb = random_operands(ins, 256, np.random.default_rng(2), "all")
    assert np.array_equal(clib.c_dot_add(c_ins, a, b, c, sa, sb), golden.dot_add(ins, a, b, c, sa, sb))
    ops = _tiles(ins, np.random.default_rng(4))
    assert np.array_equal(clib.c_mma(c_ins, *ops), golden.mma(ins, *ops))
    with pytest.raises(ValueError, match="this build has no instructions of your own"):
        clib.c_lookup("custom", ins.name)
    with pytest.raises(ValueError, match="no C kernel models this design"):
        clib.build(custom=["k=4,a=f16,c=f32,d=e4m3,base=FDA,F=24,e_zero=-133"])


def test_refusals():
    scaled = next(i for i in HANDLED if i.scale_format)
    plain = next(i for i in HANDLED if not i.scale_format)
    a, b, c, sa, sb = random_operands(scaled, 2, np.random.default_rng(1), "normal")
    with pytest.raises(ValueError, match="block-scaled: it needs scale_a and scale_b"):
        clib.c_dot_add(clib.c_lookup(scaled.arch, scaled.name), a, b, c)
    a, b, c, _, _ = random_operands(plain, 2, np.random.default_rng(1), "normal")
    with pytest.raises(ValueError, match="takes no block scales"):
        clib.c_dot_add(clib.c_lookup(plain.arch, plain.name), a, b, c, a[:, :1], a[:, :1])
    a = a.astype(np.uint64)
    a[1, 0] = 1 << 40
    with pytest.raises(ValueError, match=r"a\[.*\] = 0x10000000000 does not fit"):
        clib.c_dot_add(clib.c_lookup(plain.arch, plain.name), a, b, c)


PROGRAM = r"""
#include <inttypes.h>
#include <stdio.h>
#include "mma_golden.h"

int main(void)
{
    const mma_golden_instr *ins = mma_golden_lookup("hopper", "HGMMA.64xNx16.F32");
    uint64_t a[16], b[16], c = 0x3f800000u, d;   /* c = 1.0f */
    int i;
    if (ins == NULL) {
        fprintf(stderr, "%s\n", mma_golden_last_error());
        return 1;
    }
    for (i = 0; i < 16; i++) {
        a[i] = 0x3c00u + (uint64_t)i;             /* f16 1.0, 1.0009765625, ... */
        b[i] = 0x3555u;                           /* f16 0.333251953125 */
    }
    if (mma_golden_dot_add(ins, 1, a, b, &c, NULL, NULL, &d) != 0) {
        fprintf(stderr, "%s\n", mma_golden_last_error());
        return 1;
    }
    printf("%s %s %dx%dx%d d=0x%08" PRIx64 "\n", mma_golden_arch(ins), mma_golden_name(ins),
           mma_golden_m(ins), mma_golden_n(ins), mma_golden_k(ins), d);
    if (mma_golden_lookup("hopper", "HGMMA.nonsense") == NULL)
        printf("error: %s\n", mma_golden_last_error());
    return 0;
}
"""


def test_a_c_program_linked_against_the_library(tmp_path):
    so = clib.build()
    src = tmp_path / "example.c"
    src.write_text(PROGRAM)
    exe = tmp_path / "example"
    subprocess.run(["cc", "-std=c99", "-Wall", "-Werror", f"-I{clib.INCLUDE_DIR}", str(src), str(so),
                    f"-Wl,-rpath,{so.parent}", "-o", str(exe)], check=True, capture_output=True, text=True)
    out = subprocess.run([str(exe)], check=True, capture_output=True, text=True).stdout.splitlines()
    ins = golden.lookup("hopper", "HGMMA.64xNx16.F32")
    a = np.arange(0x3C00, 0x3C10, dtype=np.uint64)
    d = int(golden.dot_add(ins, a, np.full(16, 0x3555, np.uint64), np.uint64(0x3F800000)))
    assert out[0] == f"hopper HGMMA.64xNx16.F32 64x8x16 d=0x{d:08x}"
    assert out[1].startswith("error: unknown instruction 'HGMMA.nonsense' on hopper; valid: HMMA.1688.F32, ")


THREADS = r"""
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include "mma_golden.h"

#define R 2000
static uint64_t a[R][16], b[R][16], c[R], d[8][R];
static const mma_golden_instr *ins;

static void *work(void *arg)
{
    int t = (int)(long)arg;
    return (void *)(long)mma_golden_dot_add(ins, R, &a[0][0], &b[0][0], c, NULL, NULL, d[t]);
}

int main(void)
{
    pthread_t th[8];
    int t, i, j, rc = 0;
    ins = mma_golden_lookup("hopper", "HGMMA.64xNx16.F32");
    for (i = 0; i < R; i++) {
        for (j = 0; j < 16; j++) {
            a[i][j] = (uint64_t)(0x3000 + (i * 131 + j * 7) % 0x1800);
            b[i][j] = (uint64_t)(0xb400 + (i * 17 + j) % 0x1000);
        }
        c[i] = 0x3f800000u + (uint64_t)i * 4099u;
    }
    for (t = 0; t < 8; t++)          /* eight first calls at once: the f16 table is built concurrently */
        pthread_create(&th[t], NULL, work, (void *)(long)t);
    for (t = 0; t < 8; t++) {
        void *r;
        pthread_join(th[t], &r);
        rc |= (int)(long)r;
    }
    for (t = 1; t < 8; t++)
        rc |= memcmp(d[0], d[t], sizeof d[0]) != 0;
    for (i = 0; i < 3; i++)
        printf("%llx\n", (unsigned long long)d[0][i]);
    return rc;
}
"""


def test_concurrent_first_calls(tmp_path):
    so = clib.build()
    src, exe = tmp_path / "threads.c", tmp_path / "threads"
    src.write_text(THREADS)
    subprocess.run(["cc", "-std=c99", "-pthread", f"-I{clib.INCLUDE_DIR}", str(src), str(so),
                    f"-Wl,-rpath,{so.parent}", "-o", str(exe)], check=True, capture_output=True, text=True)
    out = subprocess.run([str(exe)], check=True, capture_output=True, text=True).stdout.split()
    ins = golden.lookup("hopper", "HGMMA.64xNx16.F32")
    i, j = np.arange(3)[:, None], np.arange(16)[None, :]
    a = (0x3000 + (i * 131 + j * 7) % 0x1800).astype(np.uint64)
    b = (0xB400 + (i * 17 + j) % 0x1000).astype(np.uint64)
    c = (0x3F800000 + np.arange(3) * 4099).astype(np.uint64)
    assert [int(x, 16) for x in out] == [int(x) for x in golden.dot_add(ins, a, b, c)]


def test_the_documented_example(tmp_path):
    """docs/golden-c.md's example program prints what the page says, which is what golden computes."""
    from golden.paths import REPO
    page = (REPO / "docs" / "golden-c.md").read_text()
    src = tmp_path / "example.c"
    src.write_text(page.split("```c\n", 1)[1].split("```", 1)[0])
    so, exe = clib.build(), tmp_path / "example"
    subprocess.run(["cc", "-std=c99", "-Wall", "-Werror", f"-I{clib.INCLUDE_DIR}", str(src), str(so),
                    f"-Wl,-rpath,{so.parent}", "-o", str(exe)], check=True, capture_output=True, text=True)
    out = subprocess.run([str(exe)], check=True, capture_output=True, text=True).stdout.splitlines()
    assert all(f"    {line}" in page.splitlines() for line in out)
    ins = golden.lookup("hopper", "HGMMA.64xNx16.F32")
    d = int(golden.dot_add(ins, np.arange(0x3C00, 0x3C10, dtype=np.uint64), np.full(16, 0x3555, np.uint64),
                           np.uint64(0x3F800000)))
    A = (0x3C00 + np.arange(64 * 16) % 64).reshape(64, 16).astype(np.uint64)
    B = (0x3555 + np.arange(16 * 8) % 7).reshape(16, 8).astype(np.uint64)
    D = golden.mma(ins, A, B, np.zeros((64, 8), np.uint64))
    assert out[0].endswith(f"d = 0x{d:08x}")
    assert out[1] == f"D[0][0] = 0x{int(D[0, 0]):08x}, D[63][7] = 0x{int(D[63, 7]):08x}"


@pytest.mark.slow
@pytest.mark.parametrize("ins", HANDLED, ids=lambda i: f"{i.arch}-{i.name}")
def test_every_entry_dot_add_slow(ins):
    assert dot_add_mismatches(ins, SLOW_ROWS, seed=1) == 0


@pytest.mark.slow
@pytest.mark.parametrize("ins", HANDLED, ids=lambda i: f"{i.arch}-{i.name}")
def test_every_entry_mma_slow(ins):
    ops = _tiles(ins, np.random.default_rng(3))
    assert np.array_equal(clib.c_mma(clib.c_lookup(ins.arch, ins.name), *ops), golden.mma(ins, *ops))


# ---------------------------------------------------------------------------- designs made at run time

RUNTIME_SPECS = [
    "k=16,m=4,n=8,a=e4m3,c=f32,scale=ue8m0,block=16,base=FDA,F=25,pass_size=16,e_zero=-133",
    "k=2,a=f16,b=f16,c=f32,d=f32,base=FDA,F=exact,e_zero=-126,out_rounding=RNE,overflow=ieee,zero_sign=ieee754",
    "k=8,a=f16,c=f32,base=FDRDA,F=24,out_rounding=RNE,overflow=ieee,zero_sign=ieee,product_overflow=true",
    "k=16,a=bf16,c=f32,base=GPS,group=4,nan_bits=0x7fc00001",
    "k=4,a=f32,c=f32,base=SFMA,fma_rounding=RZ",
    "k=32,a=e4m3,c=f32,base=FDA,F=25,e_zero=-133,pass_size=16,operand_format=f16,pass_interleave=2,c_last=true",
    "k=32,a=e5m2,b=e4m3,c=f32,base=GFDRDA,F=24,out_rounding=RNE,overflow=ieee,c_drop=25,specials=later_model",
    "k=32,a=e2m1,c=f32,scale=ue4m3,block=16,base=GDFS,F=25,e_zero=-133,group=16",
]
# specs golden refuses (golden.lookup("custom", ...)): mma_golden_from_spec refuses each, naming what is wrong
REFUSED_SPECS = {
    "k=4,a=f16,c=f32": "base is missing", "k=4,a=f16,c=f32,base=FDA": "FDA needs F",
    "k=4,a=f16,c=f32,base=FDA,F=60,e_zero=-133": r"Params.F=60; valid: 0..48 or 'exact'",
    "k=4,a=f16,c=f32,base=FDA,F=24,e_zero=-133,fma_rounding=RZ": "FDA does not read it",
    "k=4,a=f16,c=f32,base=FDA,F=24,e_zero=-133,nan_bits=0x3f800000": "not a NaN of the output format f32",
    "k=4,a=f16,c=f32,base=SFMA": "SFMA runs IEEE fused multiply-adds in one format",
    "k=6,a=f16,c=f32,base=FDA,F=24,e_zero=-133,pass_size=4": "K=6 is not a multiple of the pass size",
    "k=4,a=f16,c=f32,base=GPS,group=3": "GPS needs group G",
    "k=4,a=f16,c=f32,base=FDA,F=24,e_zero=-133,out_rounding=RNX": "out_rounding=RNX is not valid; valid: one of",
    "k=4,a=f17,c=f32,base=FDA,F=24,e_zero=-1": "a=f17 is not a format",
    "k=4,a=f16,c=f32,base=FDA,F=24,e_zero=-133,frobnicate=1": "'frobnicate' is not a golden.Params field",
    "k=4,a=f16,c=f32,scale=ue8m0,base=FDA,F=24,e_zero=-133": "scale and block go together",
    "k=4,a=f16,c=f32,base=FDRDA,F=exact": "an FDA design, not FDRDA",
    "k=4,a=f16,c=f32,base=FDA,F=24,e_zero=-133,out_frac_bits=30": r"out_frac_bits=30; valid: 1..23",
    "k=4,a=f16,c=f32,base=FDA,F=24,e_zero=5000": "e_zero=5000; valid:",
    "k=0,a=f16,c=f32,base=FDA,F=24,e_zero=-133": "k=0; valid: a positive integer",
    "k=4,a=f16,c=f32,base=FDA,F=24,e_zero=-133,F=25": "given twice",
    "k=4,a=f16,c=f32,base=FDA,F=24,e_zero=-133,c_last=maybe": "valid: true or false",
    "k=4,a=f16,c=f16,base=FDA,F=24,e_zero=-133,c_last=true,d=f32": "c_last adds c in the result format",
    "k=8,a=f16,c=f32,base=FDRDA,F=24,dot_floor_bits=60": "dot_floor_bits at most 47",
    "k=8,a=f16,c=f32,base=FDRDA,F=24,c_floor_bits=40": "c_floor_bits at most dot_floor_bits",
    "k=4,a=f16,c=f32,scale=f16,block=2,base=FDA,F=24,e_zero=-133": "not a block-scale format",
    "k=4,a=f16,c=f32,base=FDA,F=24,e_zero=-133,pass_size=4,pass_interleave=3": "pass_interleave must divide",
    "k=4,a=f16,c=f32,base=GPS,group=4,F=3": "GPS does not read it",
    "k=4,a=f16,c=f32,base=FDA,F=24,e_zero=-133,operand_format=e4m3": "holds every f16 value exactly",
}


def _from_spec_mismatches(spec: str, n: int, seed: int = 0) -> int:
    ins = golden.lookup("custom", spec)
    c_ins = clib.c_from_spec(spec)
    assert (c_ins.arch, c_ins.name, c_ins.algorithm, c_ins.m, c_ins.n, c_ins.k, c_ins.block, c_ins.formats) == \
        ("custom", spec, ins.algorithm, ins.m, ins.n, ins.k, ins.block_size or 0,
         (ins.a_format, ins.b_format, ins.c_format, ins.d_format, ins.scale_format))
    bad = 0
    for i, kind in enumerate(KINDS):
        a, b, c, sa, sb = random_operands(ins, n, np.random.default_rng([seed, i]), kind)
        bad += int((clib.c_dot_add(c_ins, a, b, c, sa, sb) != golden.dot_add(ins, a, b, c, sa, sb)).sum())
    return bad


@pytest.mark.parametrize("spec", [pytest.param(s, marks=() if j in (0, 1, 6) else pytest.mark.slow)
                                  for j, s in enumerate(RUNTIME_SPECS)])
def test_an_instruction_of_your_own_at_run_time(spec):
    so = clib.build()
    assert _from_spec_mismatches(spec, ROWS) == 0
    assert clib.build() == so                       # the library built once: no rebuild for a design of your own


def test_run_time_mma_and_one_shape():
    spec = RUNTIME_SPECS[0]
    ins, c_ins = golden.lookup("custom", spec), clib.c_from_spec(spec)
    ops = _tiles(ins, np.random.default_rng(8))
    assert np.array_equal(clib.c_mma(c_ins, *ops), golden.mma(ins, *ops))
    with pytest.raises(ValueError, match="made at run time has the one shape it was made with, M=4, N=8"):
        c_ins.with_shape(4, 16)


def test_run_time_from_params():
    ins = golden.lookup("cdna1", "v_mfma_f32_16x16x16f16")
    c_ins = clib.c_from_params(ins.params, ins.k, ins.a_format, ins.c_format, m=ins.m, n=ins.n)
    a, b, c, _, _ = random_operands(ins, ROWS, np.random.default_rng(3), "all")
    assert np.array_equal(clib.c_dot_add(c_ins, a, b, c), golden.dot_add(ins, a, b, c))


@pytest.mark.parametrize("spec", sorted(REFUSED_SPECS))
def test_run_time_refuses_what_golden_refuses(spec):
    with pytest.raises(ValueError):
        golden.lookup("custom", spec)
    with pytest.raises(ValueError, match=REFUSED_SPECS[spec]):
        clib.c_from_spec(spec)


def test_run_time_refuses_what_no_c_kernel_models():
    spec = "k=16,a=e2m1,c=f32,d=e4m3,scale=ue4m3,block=16,base=GDFS,F=25,e_zero=-133,group=16"   # e4m3 d
    assert golden.lookup("custom", spec).k == 16                       # golden computes it (numpy)
    with pytest.raises(ValueError, match="no C kernel models this design"):
        clib.c_from_spec(spec)


def _catalog_designs():
    return list({ins.datapath: ins for ins in golden.CATALOG}.values())


@pytest.mark.slow
@pytest.mark.parametrize("ins", _catalog_designs(), ids=lambda i: f"{i.arch}-{i.name}")
def test_every_catalog_design_at_run_time_slow(ins):
    """Each catalog datapath made at run time from its Params and shape gives golden's bits."""
    c_ins = clib.c_from_params(ins.params, ins.k, ins.a_format, ins.c_format, b=ins.b_format, d=ins.d_format,
                               scale=ins.scale_format, block=ins.block_size)
    bad = 0
    for i, kind in enumerate(KINDS):
        a, b, c, sa, sb = random_operands(ins, SLOW_ROWS // 10, np.random.default_rng([11, i]), kind)
        bad += int((clib.c_dot_add(c_ins, a, b, c, sa, sb) != golden.dot_add(ins, a, b, c, sa, sb)).sum())
    assert bad == 0


@pytest.mark.slow
@pytest.mark.parametrize("spec", RUNTIME_SPECS)
def test_an_instruction_of_your_own_at_run_time_slow(spec):
    assert _from_spec_mismatches(spec, SLOW_ROWS, seed=4) == 0


def test_the_cli_refuses_a_bad_spec_in_one_line(tmp_path):
    """python -m golden.clib --custom SPEC: a spec golden refuses is bad input (exit 2, one line, no traceback)."""
    import sys
    done = subprocess.run([sys.executable, "-m", "golden.clib", str(tmp_path), "--custom", "k=4,a=f16,c=f32,base=FDA"],
                          capture_output=True, text=True)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.strip().splitlines() == ["custom instruction: FDA needs F >= 0 (fraction bits kept after "
                                                "alignment) or F='exact'"]
