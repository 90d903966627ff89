"""The specification lives in the repository, and everything cites it there.

Every file of a checkout is read: none may name a path outside the repository (a sibling
``shared/`` folder, a spec file that is not shipped, a folder on a developer's machine), and
every ``docs/spec.md §N`` citation must name a section that ``docs/spec.md`` has.  Both checks
are shown to catch a planted citation.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SPEC = "docs/spec.md"

# a path outside the repository (each pattern is split so that this file does not match itself)
OUTSIDE = re.compile("|".join([
    r"\bISA" + r"\.md\b", r"\bISA" + r" \d",    # the spec's old name (and its sections), outside the checkout
    r"shared" + r"/spec", r"\.\./" + r"shared",  # the sibling folder of shared inputs
    r"/wo" + r"rk/", r"/ho" + r"me/\w", r"/Us" + r"ers/\w",  # a developer's machine
]))
SECTION_HEADING = re.compile(r"^#{2,3} (\d+(?:\.\d+)?)\.? ")
CITED_SECTION = re.compile(r"§(\d+(?:\.\d+)?)")
SKIP_DIRS = {".git", ".venv", "build", "__pycache__", ".pytest_cache", ".hypothesis"}


def repo_files(root: Path) -> list[Path]:
    """The files of the checkout at ``root``: git's list where there is one, else a walk."""
    try:
        out = subprocess.run(["git", "ls-files", "-z"], cwd=root, capture_output=True, check=True)
        names = [n for n in out.stdout.decode().split("\0") if n]
        if names:
            return [root / n for n in names if (root / n).is_file()]
    except (OSError, subprocess.CalledProcessError):
        pass
    return sorted(p for p in root.rglob("*")
                  if p.is_file() and not SKIP_DIRS.intersection(p.relative_to(root).parts))


def text_of(path: Path) -> str | None:
    """The file's text, or None for a binary file."""
    data = path.read_bytes()
    if b"\0" in data[:8192]:
        return None
    try:
        return data.decode()
    except UnicodeDecodeError:
        return None


def spec_sections(spec_text: str) -> set[str]:
    """The section numbers of the specification's headings (``"1"``, ``"4.3"``, ...)."""
    return {m.group(1) for line in spec_text.splitlines() if (m := SECTION_HEADING.match(line))}


def offences(root: Path) -> list[str]:
    """``path:line: why`` for every outside path and every citation of a missing section."""
    sections = spec_sections((root / SPEC).read_text())
    found = []
    for path in repo_files(root):
        text = text_of(path)
        if text is None:
            continue
        rel = path.relative_to(root).as_posix()
        for n, line in enumerate(text.splitlines(), 1):
            if m := OUTSIDE.search(line):
                found.append(f"{rel}:{n}: names {m.group(0)!r}, outside the repository")
            if "spec.md" in line or rel == SPEC:
                found += [f"{rel}:{n}: cites {SPEC} §{s}, which has no such section"
                          for s in CITED_SECTION.findall(line) if s not in sections]
    return found


def test_spec_has_the_cited_numbering():
    """The numbering the code cites: four parts, a section per algorithm and chain (numbered from
    1, every descriptor's among them), eight facts, note (a)."""
    from golden.descriptors import ALGORITHMS
    text = (REPO / SPEC).read_text()
    algorithms = re.findall(r"^### 3\.(\d+) (\w+):", text, re.M)
    assert [int(n) for n, _ in algorithms] == list(range(1, len(algorithms) + 1))
    assert set(ALGORITHMS) <= {name for _, name in algorithms}
    assert all(name.removeprefix("Co") in ALGORITHMS for _, name in algorithms)
    assert spec_sections(text) == ({"1", "2", "3", "4"} | {f"3.{n}" for n, _ in algorithms}
                                   | {f"4.{i}" for i in range(1, 9)})
    assert "**Note (a)" in text


def test_no_file_cites_outside_the_repository():
    assert offences(REPO) == []


def test_planted_citations_are_caught(tmp_path):
    (tmp_path / "docs").mkdir()
    (tmp_path / SPEC).write_text((REPO / SPEC).read_text())
    (tmp_path / "good.py").write_text("# zeros take e_zero (docs/spec.md §4.1 and §4.5)\n")
    assert offences(tmp_path) == []
    (tmp_path / "bad.py").write_text("# see docs/spec.md §" "4.9\n# as " + "ISA" + ".md fact 1 says\n"
                                     "# read /ho" + "me/someone/spec.txt\n")
    found = offences(tmp_path)
    assert len(found) == 3, found
    assert found[0].startswith("bad.py:1: cites docs/spec.md §" "4.9")
    assert all(f.startswith("bad.py:") for f in found)


# -- the tables of docs/spec.md are the catalog's data, restated: each cell checked against golden --

def table_after(text: str, heading: str) -> list[list[str]]:
    """The rows (header first, the rule left out) of the first table after the line starting ``heading``."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(heading))
    rows = []
    for line in lines[start + 1:]:
        if line.startswith("|"):
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if not all(re.fullmatch(r"-+", c) for c in cells):
                rows.append(cells)
        elif rows:
            break
    return rows


def arch_of(column: str) -> str:
    """``"RTX Blackwell"`` -> ``"rtx_blackwell"``, ``"CDNA3"`` -> ``"cdna3"``."""
    return column.lower().replace(" ", "_")


NV_FMTS2, NV_FMTS5 = "(E4M3|E5M2)", "(E4M3|E5M2|E3M2|E2M3|E2M1)"
NV_SPECIAL = {"UTCHMMA": r"UTCHMMA\..+", "UTCQMMA": r"UTCQMMA\..+", "UTCOMMA": r"UTCOMMA\.(?!4X$).+",
              "OMMA.SF.16864.F32.E2M1.E2M1.E8": r"OMMA\.SF\.16864\.F32\.E2M1\.E2M1\.E8(\.NVF4\.B(16|32))?"}


def nvidia_patterns(label: str) -> list[str]:
    """Regular expressions of the catalog names one row of §1 stands for."""
    f8f6f4 = "(f8f6f4)" in label
    found = []
    for token in re.findall(r"[A-Z][A-Z0-9]*MMA[\w.]*", label):
        if token in NV_SPECIAL:
            found.append(NV_SPECIAL[token])
            continue
        fmts = NV_FMTS5 if f8f6f4 or token.startswith("QMMA.SF") else NV_FMTS2
        found.append(re.escape(token).replace(r"x\.y", rf"{fmts}\.{fmts}") + (r"\.F8F6F4" if f8f6f4 else ""))
    return found


def amd_patterns(label: str) -> list[str]:
    """Regular expressions of the catalog names one row of §2 stands for (CDNA3 spelling)."""
    label = re.sub(r"\([^)]*\)|CDNA2 only", "", label)
    label = re.sub(r"\{(\w+),(\w+)\}", r"(\1|\2)", label)
    return ["v_mfma_" + t.strip() for t in re.split(r"[,;](?![^(]*\))", label) if t.strip()]


def check_cell(cell: str, matched: list, where: str) -> None:
    """One cell (``CoFDA 24 (2x8)``, ``GPS G=4``, ``-``) against the catalog entries of its row and architecture."""
    if cell == "-":
        assert matched == [], f"{where}: the spec says none, the catalog has {[i.name for i in matched]}"
        return
    assert matched, f"{where}: the spec says {cell!r}, the catalog has no such instruction"
    algorithm = cell.split()[0]
    F = re.match(r"\w+ (\d+)", cell)
    passes, group = re.search(r"\((\d+)x(\d+)\)", cell), re.search(r"G=(\d+)", cell)
    for ins in matched:
        p, say = ins.params, f"{where}: {ins.name} is {ins.algorithm} {ins.params}, the spec says {cell!r}"
        assert ins.algorithm == algorithm, say
        assert F is None or p.F == int(F.group(1)), say
        if passes:
            count, per_pass = int(passes.group(1)), int(passes.group(2))
            assert (p.pass_size, ins.k) == (per_pass, count * per_pass), say
        assert group is None or p.group == int(group.group(1)), say


def check_table(rows: list[list[str]], first_arch: int, patterns) -> set:
    """Every cell of a §1/§2 table; the ``(arch, name)`` of every catalog entry a row matched."""
    import golden
    covered = set()
    header = rows[0]
    for row in rows[1:]:
        regexes = [re.compile(r) for r in patterns(row[0])]
        for column, cell in zip(header[first_arch:], row[first_arch:]):
            arch = arch_of(column)
            matched = [i for i in golden.instructions(arch) if i.native
                       and any(r.fullmatch(n) for r in regexes for n in (i.name, *i.aliases))]
            check_cell(cell.replace(" (a)", ""), matched, f"§ table row {row[0]!r}, {column}")
            covered |= {(i.arch, i.name) for i in matched}
    return covered


def test_the_instruction_tables_are_the_catalog():
    """§1 and §2 cell by cell, and every native catalog entry of their architectures in some row."""
    import golden
    text = (REPO / SPEC).read_text()
    nvidia, amd = table_after(text, "## 1. "), table_after(text, "## 2. ")
    covered = check_table(nvidia, 6, nvidia_patterns) | check_table(amd, 4, amd_patterns)
    archs = {arch_of(c) for c in nvidia[0][6:] + amd[0][4:]}
    missing = [f"{i.arch} {i.name}" for a in sorted(archs) for i in golden.instructions(a)
               if i.native and (i.arch, i.name) not in covered]
    assert missing == [], f"catalog entries no row of docs/spec.md §1/§2 names: {missing}"
    older = re.search(r"CDNA1-style names .*?\(for example ([^)]*)\)", text, re.S).group(1)
    for name in re.findall(r"f\d\d_\w+", older):                 # CDNA2's older spellings resolve
        assert golden.lookup("cdna2", "v_mfma_" + name).arch == "cdna2", name


def test_a_wrong_cell_is_caught():
    import golden
    ins = [golden.lookup("ampere", "HMMA.16816.F32")]
    check_cell("CoFDA 24 (2x8)", ins, "planted")
    for wrong in ("FDA 24", "CoFDA 25 (2x8)", "CoFDA 24 (4x4)", "-"):
        try:
            check_cell(wrong, ins, "planted")
        except AssertionError:
            continue
        raise AssertionError(f"{wrong!r} passed for {ins[0]}")


def nvidia_fda():
    """The native NVIDIA FDA and CoFDA entries, each with the architecture whose datapath it runs on
    (Turing's m8n8k4 on Volta's, §1 note (a))."""
    import golden
    return [(ins, "volta" if ins.name.startswith("HMMA.884") else ins.arch) for ins in golden.select("all", "all")
            if ins.vendor == "nvidia" and ins.native and ins.algorithm in ("FDA", "CoFDA")]


def zero_exponent_errors(text: str) -> list[str]:
    """Where §4.1's e_zero table (and the scaled forms' value) differs from the catalog."""
    rows = table_after(text, "### 4.1 ")
    e_zero = {(row[0], arch_of(a.strip())): int(v) for row in rows[1:]
              for col, v in zip(rows[0][1:], row[1:]) for a in col.split(",")}
    scaled = int(re.search(r"block scales uses (-\d+)", text).group(1))
    found = []
    for ins, arch in nvidia_fda():
        want = scaled if ins.scale_format else e_zero[(ins.d_format, arch)]
        if ins.params.e_zero != want:
            found.append(f"{ins.arch} {ins.name}: e_zero {ins.params.e_zero}, §4.1 says {want}")
    return found


def pass_errors(text: str) -> list[str]:
    """Where §4.2 (L = bytes of A per pass / element bytes on NVIDIA; CDNA3's L) differs from the catalog."""
    import golden
    rows = table_after(text, "### 4.2 ")
    nv_bytes = {arch_of(a.strip()): int(v) for col, v in zip(rows[0][1:], rows[1][1:]) for a in col.split(",")}
    rows = table_after(text, "On CDNA3:")
    amd_formats = {"fp8": "e4m3fnuz", "bf8": "e5m2fnuz"}
    amd_l = {amd_formats.get(f.strip(), f.strip()): int(v) for col, v in zip(rows[0][1:], rows[1][1:])
             for f in col.split(",")}
    element_bytes = {"tf32": 4, "f16": 2, "bf16": 2}          # every narrower format counts one byte
    expected = [(ins, nv_bytes[arch] // element_bytes.get(ins.a_format, 1)) for ins, arch in nvidia_fda()]
    expected += [(ins, amd_l[ins.a_format]) for ins in golden.instructions("cdna3")
                 if ins.native and "FDRDA" in ins.algorithm]
    assert len(expected) > 250
    return [f"{ins.arch} {ins.name}: L {ins.params.pass_size}, §4.2 gives {min(ins.k, per_pass)}"
            for ins, per_pass in expected if ins.params.pass_size != min(ins.k, per_pass)]


def test_the_zero_exponents_and_products_per_pass_are_golden_s():
    """§4.1 and §4.2 against every entry they govern; a changed number in either is caught."""
    text = (REPO / SPEC).read_text()
    assert len(nvidia_fda()) > 200
    assert zero_exponent_errors(text) == [] and pass_errors(text) == []
    planted = text.replace("| f32 | -131 | -132 | -133 |", "| f32 | -131 | -132 | -134 |")
    assert planted != text and len(zero_exponent_errors(planted)) > 50
    planted = text.replace("| bytes of A per pass | 8 | 16 | 32 |", "| bytes of A per pass | 8 | 32 | 32 |")
    assert planted != text and any("ampere HMMA.16816.F32: L 8" in e for e in pass_errors(planted))


def test_the_subnormal_exponents_are_golden_s():
    """§4.7: the exponent golden decodes the smallest subnormal (ue8m0: the byte 0) with."""
    import numpy as np

    from golden import formats
    rows = table_after((REPO / SPEC).read_text(), "### 4.7 ")
    for names, value in zip(rows[0][1:], rows[1][1:]):
        for name in names.split(","):
            fmt = formats.get_format(name.strip())
            smallest = np.array([0 if fmt.name == "ue8m0" else 1 << fmt.ignored_low_bits])
            assert formats.decode(fmt, smallest).exp[0] == int(value), (name, value)


def test_the_cdna1_table_is_the_catalog():
    """§2's CDNA1 table row by row: every name is a CDNA1 entry of that K, formats and algorithm
    (pass size in "(passes x products)"), and every CDNA1 entry is in some row."""
    import golden
    rows = table_after((REPO / SPEC).read_text(), "In the project's terms these are FDA")
    covered = set()
    for names, k, ab, cd, algorithm in rows:
        for name in re.findall(r"f32_\w+", names):
            ins = golden.lookup("cdna1", "v_mfma_" + name)
            covered.add(ins.name)
            assert (ins.k, ins.a_format, ins.c_format) == (int(k), ab, cd), name
            assert ins.algorithm == algorithm.split()[0], f"{name}: {ins.algorithm}, not {algorithm}"
            shape = re.search(r"\((\d+)x(\d+)\)", algorithm)
            if shape:
                assert (ins.params.F, ins.params.pass_size, ins.k // ins.params.pass_size) == \
                    ("exact", int(shape[2]), int(shape[1])), name
    assert covered == {i.name for i in golden.instructions("cdna1")}
