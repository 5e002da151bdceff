"""The Calibrate page's pure half (:mod:`zsim.app.calibrate_upload`): uploads are checked,
parsed by the library's loader under their own names, and fitted exactly as the library
fits them.

Expected figures come from the calibration library called directly on the same files
(``load_results``, ``fit_device``, ``predict_iops``), never from the module under test.
"""

from __future__ import annotations

import functools
import re
from pathlib import Path

import pytest

from zsim.app import calibrate_upload as cu
from zsim.calibrate.fit import fit_device
from zsim.calibrate.forward import predict_iops
from zsim.calibrate.load import load_results
from zsim.calibrate.measurement import ParseError
from zsim.errors import ZsimError

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "calibration" / "results" / cu.SAMPLE_SET / "results"
DATA = ROOT / "tests" / "data" / "calibrate"
FIO_JSON = DATA / "fio-3.33_randread_json.txt"


def sample_paths() -> list[Path]:
    return sorted(SAMPLE.glob("*.json"))


@functools.cache
def library_fit():  # the library on the folder's files, as 'zsim calibrate fit' runs it
    loaded = load_results(sample_paths())
    return loaded, fit_device(loaded.measurements, name="vm-virtio-file")


@functools.cache
def app_outcome() -> cu.FitOutcome:
    parsed = cu.parse_uploads(cu.sample_files())
    return cu.fit_uploads(parsed, name="vm-virtio-file", when="on a test day")


# ---------------------------------------------------------------- the sample set


def test_sample_files_are_the_shipped_results():
    files = cu.sample_files()
    assert cu.sample_dir() == SAMPLE
    assert [name for name, _ in files] == [p.name for p in sample_paths()]
    assert len(files) == 43
    assert all(data == (SAMPLE / name).read_bytes() for name, data in files)


def test_parse_uploads_of_the_sample_gives_what_the_loader_gives():
    loaded, _ = library_fit()
    parsed = cu.parse_uploads(cu.sample_files())
    assert len(parsed.measurements) == len(loaded.measurements) == 50
    for mine, theirs in zip(parsed.measurements, loaded.measurements, strict=True):
        # the source is the upload's name (then #job), not the temporary folder's path
        assert mine.source == theirs.source.removeprefix(str(SAMPLE) + "/")
        assert "zsim-upload-" not in mine.source
        assert (mine.name, mine.rw, mine.bs, mine.iodepth, mine.purpose, mine.target_bytes) == (
            theirs.name,
            theirs.rw,
            theirs.bs,
            theirs.iodepth,
            theirs.purpose,
            theirs.target_bytes,
        )
        assert mine.direction() == theirs.direction()
    assert parsed.files == tuple(p.name for p in sample_paths())
    assert parsed.digest == cu.upload_digest(cu.sample_files())
    rows = cu.measurement_rows(parsed)
    assert len(rows) == 50
    row = next(r for r in rows if r["step"] == "randread-4k-qd1")
    m = next(m for m in loaded.measurements if m.name == "randread-4k-qd1")
    assert (row["kind"], row["bs_bytes"], row["qd"]) == ("randread", 4096, 1)
    assert row["iops"] == m.read.iops
    assert row["bytes_per_s"] == m.read.bytes_per_s


def test_fit_of_the_sample_is_the_library_fit():
    _, fit = library_fit()
    outcome = app_outcome()
    mine = {p.name: (p.value, p.stderr, p.fitted) for p in outcome.fit.parameters}
    theirs = {p.name: (p.value, p.stderr, p.fitted) for p in fit.parameters}
    assert mine == theirs
    assert outcome.fit.kind == fit.kind == "nvme"
    assert outcome.fit.device_bytes == fit.device_bytes == 2**30
    assert [(r.name, r.predicted_iops, r.used) for r in outcome.fit.residuals] == [
        (r.name, r.predicted_iops, r.used) for r in fit.residuals
    ]
    # the profile file is the one 'zsim calibrate fit' writes for these inputs
    from zsim.calibrate.fit import profile_toml

    names = [p.name for p in sample_paths()]
    expected = profile_toml(fit, inputs=names, when="on a test day")
    assert outcome.profile_toml == expected.replace(str(SAMPLE) + "/", "")
    assert 'kind = "nvme"' in outcome.profile_toml
    rows = cu.parameter_rows(outcome.fit)
    assert {r["name"] for r in rows} >= {"read_latency", "read_iops", "read_bw", "write_bw"}


def test_closed_form_validation_matches_the_library_predictions():
    loaded, fit = library_fit()
    val = app_outcome().validation
    expected = {}
    for m in loaded.measurements:
        if m.ok and m.purpose != "prepare":
            pred = predict_iops(fit.profile, m, fit.device_bytes)
            expected[m.name] = pred / m.direction().iops - 1.0
    assert {r.name: r.error for r in val.rows} == pytest.approx(expected, rel=1e-12)
    s = val.summary()
    errors = list(expected.values())
    assert s["zsim"]["n"] == len(errors) == 49
    assert s["zsim"]["mean_abs"] == pytest.approx(sum(map(abs, errors)) / len(errors))
    assert s["zsim"]["max_abs"] == pytest.approx(max(map(abs, errors)))
    # the rule of thumb and the leave-one-out are there, as 'zsim validate' gives them
    assert s["rule_of_thumb"]["n"] == 49
    assert s["leave_one_out"]["n"] == sum(r.used for r in fit.residuals) == 39
    rows = cu.residual_rows(app_outcome())
    assert len(rows) == 49
    assert sum(r["fitted"] for r in rows) == 39


def test_leave_one_out_off_skips_the_refits():
    # the flag once had its name shadowed by the function it switches, so it did nothing
    _loaded, fit = library_fit()
    parsed = cu.parse_uploads(cu.sample_files())
    val = cu.closed_form_validation(fit, parsed.measurements, leave_one_out=False)
    assert val.summary()["leave_one_out"]["n"] == 0
    assert val.summary()["zsim"]["n"] == 49


# ---------------------------------------------------------------- limits and bad files


def test_oversize_file_names_the_file_and_the_limit():
    big = b"{" + b" " * cu.MAX_FILE_BYTES
    with pytest.raises(ZsimError, match=r"big\.json.*5,000,000 bytes"):
        cu.parse_uploads([("ok.json", FIO_JSON.read_bytes()), ("big.json", big)])


def test_too_many_files_names_the_limit():
    files = [(f"f{i}.json", b"{}") for i in range(cu.MAX_FILES + 1)]
    with pytest.raises(ZsimError, match=rf"{cu.MAX_FILES + 1} files: at most {cu.MAX_FILES}"):
        cu.parse_uploads(files)


@pytest.mark.parametrize(
    "name", ["../evil.json", "..", "a/b.json", "..\\x.json", "/etc/passwd", ".hidden", "a\x00b"]
)
def test_path_names_are_refused(name: str):
    with pytest.raises(ZsimError, match=re.escape(repr(name[:80]))):
        cu.parse_uploads([(name, FIO_JSON.read_bytes())])


def test_empty_and_duplicate_files_are_refused():
    with pytest.raises(ZsimError, match=r"'empty\.json' is empty"):
        cu.parse_uploads([("empty.json", b"")])
    data = FIO_JSON.read_bytes()
    with pytest.raises(ZsimError, match=r"'a\.json' is uploaded twice"):
        cu.parse_uploads([("a.json", data), ("a.json", data)])
    with pytest.raises(ZsimError, match="no files"):
        cu.parse_uploads([])


def test_truncated_fio_json_names_the_file_and_line():
    text = FIO_JSON.read_text()
    cut = text[: len(text) // 2].encode()
    with pytest.raises(ParseError, match=r"^randread-cut\.json, line \d+: ") as info:
        cu.parse_uploads([("randread-cut.json", cut)])
    assert isinstance(info.value, ZsimError)
    assert info.value.path == "randread-cut.json"
    assert "zsim-upload-" not in str(info.value)


def test_truncated_stored_step_names_the_file_and_line():
    data = (SAMPLE / "randread-4k-qd1.json").read_bytes()
    with pytest.raises(ParseError, match=r"^randread-4k-qd1\.json, line \d+: truncated"):
        cu.parse_uploads([("randread-4k-qd1.json", data[: len(data) // 3])])


def test_junk_names_the_file():
    with pytest.raises(ParseError, match=r"^notes\.txt, line 1: not a result zsim reads"):
        cu.parse_uploads([("notes.txt", b"hello\x00\xff world\n")])


# ---------------------------------------------------------------- other kinds of file


def test_raw_fio_dd_and_zpool_files_are_read_under_their_names():
    files = [
        ("randread.json", FIO_JSON.read_bytes()),
        ("dd-read.txt", (DATA / "dd_gnu-9.1_plain.txt").read_bytes()),
        ("status.txt", (DATA / "zpool" / "status_2.1_resilvered.txt").read_bytes()),
    ]
    parsed = cu.parse_uploads(files)
    assert [m.tool for m in parsed.measurements] == ["fio", "dd"]
    assert parsed.measurements[0].source.startswith("randread.json#")
    assert parsed.measurements[1].source == "dd-read.txt"
    assert parsed.measurements[1].rw == "read"
    assert list(parsed.pool_logs["scans"]) == ["status.txt"]
    assert parsed.pool_logs["scans"]["status.txt"]["kind"] == "resilver"
    assert parsed.pool_text.startswith("pool logs")
    assert "status.txt: resilver" in parsed.pool_text


def test_dd_without_a_direction_in_its_name():
    with pytest.raises(ZsimError, match=r"^run1\.txt: a dd summary does not say"):
        cu.parse_uploads([("run1.txt", (DATA / "dd_gnu-9.1_plain.txt").read_bytes())])


def test_fit_without_a_plan_asks_for_the_page_inputs():
    parsed = cu.parse_uploads([("randread.json", FIO_JSON.read_bytes())])
    with pytest.raises(ZsimError, match="enter the device size above"):
        cu.fit_uploads(parsed, name="x")
    only_pool = cu.parse_uploads(
        [("status.txt", (DATA / "zpool" / "status_2.1_resilvered.txt").read_bytes())]
    )
    with pytest.raises(ZsimError, match="no fio or dd measurements"):
        cu.fit_uploads(only_pool, name="x")


@pytest.mark.parametrize(
    ("name", "expected"),
    [("my-ssd", "my-ssd"), (" ssd_2.v1 ", "ssd_2.v1"), ("disk.toml", "disk")],
)
def test_profile_names(name: str, expected: str):
    assert cu.check_profile_name(name) == expected


@pytest.mark.parametrize("name", ["", "../x", "a b", "-x", "x" * 65, "x/y", ".toml"])
def test_bad_profile_names(name: str):
    with pytest.raises(ZsimError, match="profile name"):
        cu.check_profile_name(name)


def test_base_keys_are_read_as_the_cli_reads_them():
    assert cu.parse_base("pcie_gen=4, rpm=7200\ninterface=sata") == {
        "pcie_gen": 4,
        "rpm": 7200,
        "interface": "sata",
    }
    assert cu.parse_base("  ") == {}
    with pytest.raises(ZsimError, match="KEY=VALUE"):
        cu.parse_base("pcie_gen")


def test_des_replay_is_limited():
    parsed = cu.parse_uploads(cu.sample_files())
    names = [r.name for r in app_outcome().validation.rows]
    with pytest.raises(ZsimError, match=f"at most {cu.MAX_DES_RUNS}"):
        cu.des_validation(app_outcome(), parsed.measurements, names[: cu.MAX_DES_RUNS + 1])
    with pytest.raises(ZsimError, match="choose at least one"):
        cu.des_validation(app_outcome(), parsed.measurements, [])
    with pytest.raises(ZsimError, match="no finished measurement named 'prepare'"):
        cu.des_validation(app_outcome(), parsed.measurements, ["prepare"])
