"""``zsim capacity`` with an expanded RAIDZ vdev (issue 20): text, ``--json`` and bad input."""

from __future__ import annotations

import json

import pytest

import zsim
from zsim.cli import main


def run(capsys, argv: list[str]) -> str:
    code = main(argv)
    out = capsys.readouterr()
    assert code == 0, out.err
    return out.out


def test_text_shows_four_figures_in_both_units_and_the_commands(capsys):
    text = run(capsys, ["capacity", "raidz1 3+1", "--disk-size", "3TB"])
    report = zsim.capacity("raidz1 3+1", disk_size="3TB")
    assert "zpool create tank raidz1 sda sdb sdc\n" in text
    assert "zpool attach tank raidz1-0 sdd" in text
    for label in ("zpool list SIZE", "zfs USED+AVAIL", "real, for new data", "after zfs rewrite"):
        line = next(line for line in text.splitlines() if line.startswith(label))
        assert " TB (" in line and "TiB)" in line, line
    after = next(line for line in text.splitlines() if line.startswith("after zfs rewrite"))
    assert f"{report.usable_after_rewrite_bytes / 1e12:.2f} TB" in after
    assert "expansion steps" in text and "sdd to vdev 0" in text


def test_text_of_a_plain_layout_is_unchanged_in_kind(capsys):
    text = run(capsys, ["capacity", "raidz2 8", "--disk-size", "12TB"])
    assert "zpool attach" not in text and "after zfs rewrite" not in text
    assert "zpool create tank raidz2 sda sdb sdc sdd sde sdf sdg sdh" in text


def test_json_keys(capsys):
    out = run(
        capsys,
        ["capacity", "raidz2 6+2", "--disk-size", "8TB", "--fill-at-attach", "75%", "--json"],
    )
    data = json.loads(out)
    report = zsim.capacity("raidz2 6+2", disk_size="8TB", fill_at_attach=0.75)
    assert data["usable_bytes"] == report.usable_bytes  # what zfs list reports
    assert data["usable_after_rewrite_bytes"] == report.usable_after_rewrite_bytes
    assert data["usable_new_data_bytes"] == report.usable_new_data_bytes
    assert data["usable_bytes"] < data["usable_new_data_bytes"] < data["usable_after_rewrite_bytes"]
    assert data["fill_at_attach"] == 0.75
    assert data["zpool_create_form"] == "raidz2 sda sdb sdc sdd sde sdf"
    assert data["zpool_attach_commands"] == [
        "zpool attach tank raidz2-0 sdg",
        "zpool attach tank raidz2-0 sdh",
    ]
    vdev = data["vdevs"][0]
    assert vdev["original_width"] == 6 and vdev["attached_devices"] == ["sdg", "sdh"]
    assert [s["width"] for s in vdev["steps"]] == [6, 7, 8]
    assert [s["step"] for s in data["expansion_steps"]] == [0, 1, 2]


def test_attached_back_to_back_keeps_only_the_first_attachs_data_narrow(capsys):
    base = ["capacity", "raidz2 3+3", "--disk-size", "12TB", "--fill-at-attach", "0.5", "--json"]
    refilled = json.loads(run(capsys, base))
    back_to_back = json.loads(run(capsys, [*base, "--attached-back-to-back"]))
    assert refilled["written_between_attaches"] is True
    assert back_to_back["written_between_attaches"] is False
    # less data was written at the narrow widths, so more of the space is at the new one
    assert refilled["usable_new_data_bytes"] < back_to_back["usable_new_data_bytes"]
    assert back_to_back["usable_new_data_bytes"] < back_to_back["usable_after_rewrite_bytes"]
    assert back_to_back["usable_bytes"] == refilled["usable_bytes"]  # zfs list: the same
    report = zsim.capacity(
        "raidz2 3+3", disk_size="12TB", fill_at_attach=0.5, written_between_attaches=False
    )
    assert report.usable_new_data_bytes == back_to_back["usable_new_data_bytes"]


def test_json_of_a_plain_layout_has_equal_figures(capsys):
    data = json.loads(run(capsys, ["capacity", "mirror 2", "--disk-size", "4TB", "--json"]))
    assert data["usable_after_rewrite_bytes"] == data["usable_bytes"]
    assert data["expansion_steps"] == [] and data["zpool_attach_commands"] == []


def test_zpool_spelling_on_the_command_line(capsys):
    a = json.loads(run(capsys, ["capacity", "raidz1 3+1", "--disk-size", "3TB", "--json"]))
    b = json.loads(
        run(capsys, ["capacity", "raidz1 sda sdb sdc attach sdd", "--disk-size", "3TB", "--json"])
    )
    assert a == b


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (["raidz2 6+0"], "attaches no disk"),
        (["draid2:4d:1s:11c 11+1"], "dRAID"),
        (["mirror 2+1"], "mirror"),
        (["raidz1 250+10"], "255"),
        (["raidz1 3+1", "--zfs-version", "2.2"], "2.3"),
        (["raidz1 3+1", "--fill-at-attach", "1.2"], "fill_at_attach"),
        (["raidz1 3+1", "--fill-at-attach", "lots"], "--fill-at-attach"),
        (["raidz1 3+1", "--fill-at-attach", "nan"], "fill_at_attach"),
        (["raidz1 50+7", "--ashift", "16"], "vdev_raidz_attach_check"),
    ],
)
def test_bad_input_is_exit_2_and_one_line(capsys, argv, words):
    code = main(["capacity", argv[0], "--disk-size", "3TB", *argv[1:]])
    err = capsys.readouterr().err
    assert code == 2, err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    assert words in err, err
