"""The registry of reference sets: its data is there, its names are unique, the command line
takes its sets and default from it, and every tolerance is a positive bound."""

from __future__ import annotations

from zsim.cli import _build_parser
from zsim.validation.common import reference_root
from zsim.validation.registry import DEFAULT_SETS, REFERENCE_SETS, SET_NAMES, reference_set


def test_every_registered_data_file_exists():
    root = reference_root()
    for s in REFERENCE_SETS:
        assert s.data, s.name
        for name in s.data:
            path = root.joinpath(name)
            assert path.is_file() or path.is_dir(), (s.name, name)


def test_names_and_json_keys_are_unique():
    assert len(set(SET_NAMES)) == len(SET_NAMES) == len(REFERENCE_SETS)
    assert len({s.json_key for s in REFERENCE_SETS}) == len(REFERENCE_SETS)
    assert all(reference_set(n).name == n for n in SET_NAMES)


def test_the_cli_default_and_help_come_from_the_registry():
    assert DEFAULT_SETS == ("ars", "disksim")
    parser = _build_parser()
    args = parser.parse_args(["validate"])
    assert args.sets == []  # run_sets() then runs the registry's default
    validate = parser._subparsers._group_actions[0].choices["validate"]  # type: ignore[union-attr]
    text = validate.format_help()
    for s in REFERENCE_SETS:
        assert s.name in text
    assert f"Default: {' and '.join(DEFAULT_SETS)}." in " ".join(text.split())


def test_tolerances_are_positive():
    for s in REFERENCE_SETS:
        assert s.tolerance, s.name
        for key, value in s.tolerance.items():
            assert value > 0, (s.name, key)


def test_options_are_ones_the_command_gives():
    for s in REFERENCE_SETS:
        assert set(s.options) <= {"seed", "target_ci"}, s.name


def test_run_sets_tells_its_progress_as_each_set_starts_and_ends(monkeypatch):
    """``zsim validate`` must not sit silent for minutes: a line as each set starts and one
    as it ends (the plain form, as on a pipe; rich's bar on a terminal)."""
    import dataclasses
    import io

    from zsim.commands.validate_all import PlainProgress
    from zsim.validation import registry

    fake = [
        dataclasses.replace(s, rows=lambda **options: [], table=lambda rows: "t", summary=None)
        for s in REFERENCE_SETS
    ]
    monkeypatch.setattr(registry, "REFERENCE_SETS", tuple(fake))
    out = io.StringIO()
    data, text = registry.run_sets(["ars", "disksim"], progress=PlainProgress(out))
    lines = out.getvalue().splitlines()
    assert lines[0] == "[1/2] ars: running"
    assert lines[1].startswith("[1/2] ars: 0 points, ")
    assert lines[2] == "[2/2] disksim: running"
    assert len(data) == 2 and text.count("\n") >= 1
