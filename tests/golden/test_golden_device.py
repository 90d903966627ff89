"""golden.device: the one grammar of device words (DeviceSpec.parse), its one-line refusals, and the
contract's optional extras with their defaults."""

from __future__ import annotations

import numpy as np
import pytest

from golden.device import Device, DeviceSpec, DeviceSpecError, close, takes_narrow, unsupported_rows

WORDS = ["golden", "golden:F=24,out_rounding=RNE", "rtl", "rtl:hw:pipeline=3", "core",
         "dut:examples/dut/dotp_vr/unit.toml", "torch", "gpu", "cuda", "rocm", "fpga:socket://127.0.0.1:5555",
         "fpga:/dev/ttyUSB0"]


@pytest.mark.parametrize("text", WORDS)
def test_a_word_reads_back_as_written(text):
    spec = DeviceSpec.parse(text, plugins={"fpga"})
    assert str(spec) == text
    assert DeviceSpec.parse(str(spec), plugins={"fpga"}) == spec
    assert spec.kind == DeviceSpec.kind_of(text)


def test_the_parts_of_a_spec():
    assert DeviceSpec.parse("gpu") == DeviceSpec("torch", "", "gpu")
    assert DeviceSpec.parse("golden:F=24").params == {"F": 24}
    assert DeviceSpec.parse("dut:a/unit.toml").argument == "a/unit.toml"
    assert DeviceSpec.parse("fpga:socket://h:1", plugins={"fpga"}).is_hardware
    assert not any(DeviceSpec.parse(w).is_hardware for w in ("golden", "rtl", "core", "gpu", "dut:x.toml"))


@pytest.mark.parametrize("text, words", [
    ("dut:", "dut: needs the description's path, e.g. dut:examples/dut/dotp_vr/unit.toml"),
    ("dut: ", "dut: needs the description's path"),
    ("nosuch", "unknown backend 'nosuch': golden, rtl, rtl:UNIT, core, dut:path/unit.toml, torch"),
    ("core:x", "unknown backend 'core:x'"),
    ("dut", "unknown backend 'dut'"),
    ("fpga", "backend 'fpga' needs an argument: fpga:ARGUMENT"),
    ("golden:", "golden: takes FIELD=VALUE"),
    ("golden:F=abc", "backend 'golden:F=abc': Params.F='abc' is not valid; valid:"),
    ("rtl:", "rtl: takes a co-simulation unit spec"),
])
def test_a_bad_word_is_refused_in_one_line(text, words):
    with pytest.raises(DeviceSpecError) as e:
        DeviceSpec.parse(text, plugins={"fpga"})
    assert isinstance(e.value, ValueError)
    assert words in str(e.value) and "\n" not in str(e.value), str(e.value)


def test_no_plugins_says_how_to_get_them():
    with pytest.raises(DeviceSpecError, match=r"unknown device 'fpga:x'.*no plugin devices are registered"):
        DeviceSpec.parse("fpga:x", plugins={}, noun="device")


def test_the_extras_and_their_defaults():
    def plain(ins, a, b, c, scale_a=None, scale_b=None):
        return np.zeros(len(c), np.uint64)

    class Full:
        narrow_operands = True
        closed = False

        def __call__(self, ins, a, b, c, scale_a=None, scale_b=None):
            return plain(ins, a, b, c)

        def unsupported(self, ins, a, b, c, scale_a=None, scale_b=None):
            return [True] * len(c)

        def close(self):
            self.closed = True

    full = Full()
    assert isinstance(plain, Device) and isinstance(full, Device)
    assert not takes_narrow(plain) and takes_narrow(full)
    assert unsupported_rows(plain, None, None, None, [0]) is None
    assert unsupported_rows(full, None, None, None, [0, 0]).tolist() == [True, True]
    close(plain)
    close(full)
    assert full.closed
