"""Parse a layout string into a vdev tree and print a tree back (``DESIGN.md`` §3).

Two spellings give the same tree:

* compact — counts instead of names: ``2x raidz2 6 + mirror 2 log mirror 2 cache 1``;
* ``zpool create`` — device names: ``raidz2 sda sdb sdc sdd log mirror nvme0n1 nvme1n1``.

An expanded RAIDZ vdev (OpenZFS 2.3+ RAIDZ expansion, ``zpool attach POOL raidzP-N DISK``) is
spelled ``raidz2 6+2`` (created 6 wide, 2 disks attached since; no spaces around that ``+``)
or, with names, the creation devices followed by ``attach`` and the attached devices in the
order they were attached: ``raidz2 sda sdb sdc sdd sde sdf attach sdg sdh``. ``attach`` applies
to the raidz vdev just before it. See ``docs/grow.md``.

Compact layouts get Linux names (``sda``, ``sdb``, … ``sdaa``) in order, so
``parse_layout(to_zpool(t)) == t`` for every tree. One string uses one spelling; mixing counts
and names is an error that shows both spellings.

Validation follows ``zpool create`` (``is_grouping()``, ``construct_spec()`` and
``draid_config_by_type()`` in OpenZFS ``cmd/zpool/zpool_vdev.c``): a mirror needs 2 devices,
raidzP needs P+1 and at most 255, dRAID's data+parity must fit in children − spares, log,
special and dedup vdevs are plain devices or mirrors, cache and spare devices are plain.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from zsim.errors import LayoutError, UnitError
from zsim.layout.tree import (
    SUPPORT_CLASSES,
    BtrfsArray,
    Layout,
    MdArray,
    RawDevices,
    Vdev,
    VdevClass,
    ZfsLayout,
    ZpoolOnBlock,
    linux_disk_name,
)
from zsim.units import KiB, parse_size

MAX_RAIDZ_CHILDREN = 255  # is_grouping(): maxdev = 255 for raidz and draid
MAX_DRAID_CHILDREN = 255  # VDEV_DRAID_MAX_CHILDREN
MAX_DRAID_SPARES = 100  # draid_config_by_type(): "an arbitrary limit of 100"
MAX_PARITY = 3  # VDEV_RAIDZ_MAXPARITY / VDEV_DRAID_MAXPARITY
MAX_DEVICES = 10_000  # zsim's own bound, so a typo like "stripe 1000000" fails fast
MD_DEFAULT_CHUNK = 512 * KiB  # mdadm's default chunk since 3.1

_MULTIPLIER = re.compile(r"^([0-9]{1,9})[xX×]$")
_RAIDZ = re.compile(r"^raidz([0-9]{0,9})$")
_DRAID = re.compile(r"^draid([0-9]{0,9})((?::[^:\s]*)*)$")
_INTEGER = re.compile(r"^[0-9]+$")
_EXPANDED = re.compile(r"^([0-9]{1,9})\+([0-9]{1,9})$")
_ATTACH = "attach"
_CLASS_WORDS: dict[str, VdevClass] = {
    "log": "log",
    "logs": "log",
    "cache": "cache",
    "special": "special",
    "dedup": "dedup",
    "spare": "spare",
    "spares": "spare",
}
_KEYWORDS = {"stripe", "mirror", "+", _ATTACH, *_CLASS_WORDS}

EXAMPLES = "'raidz2 8', '2x mirror 2', 'draid2:8d:2s:24c', 'raidz2 sda sdb sdc sdd'"


def _is_type_word(token: str) -> bool:
    return (
        token in ("stripe", "mirror")
        or _RAIDZ.match(token) is not None
        or _DRAID.match(token) is not None
    )


def _is_keyword(token: str) -> bool:
    return token in _KEYWORDS or _is_type_word(token) or _MULTIPLIER.match(token) is not None


@dataclass(frozen=True)
class _Spec:
    """One vdev specification before devices are named: type word + count or names."""

    type_word: str  # "disk", "stripe", "mirror", "raidzP", "draid..."
    count: int | None  # compact form
    names: tuple[str, ...]  # zpool form
    repeat: int
    vclass: VdevClass
    attached: int = 0  # compact form: disks attached since creation ("6+2")
    attached_names: tuple[str, ...] = ()  # zpool form: the names after "attach"


def _tokens(text: str) -> list[str]:
    """Split on white space and on '+' joins, keeping an expansion count ``6+2`` whole."""
    tokens: list[str] = []
    for chunk in text.split():
        if _EXPANDED.match(chunk):
            tokens.append(chunk)
        else:
            tokens.extend(chunk.replace("+", " + ").split())
    return tokens


def parse_layout(text: str) -> Layout:
    """Parse a layout string (either spelling) into a :data:`~zsim.layout.tree.Layout`.

    Raises :class:`~zsim.errors.LayoutError` naming the problem and a layout that would work.
    """
    if not isinstance(text, str):
        raise LayoutError(f"a layout is text such as {EXAMPLES}, not {type(text).__name__}")
    tokens = _tokens(text)
    if not tokens:
        raise LayoutError(f"the layout is empty; write one like {EXAMPLES}")
    head = tokens[0].lower()
    if head.startswith("md-"):
        return _parse_md(tokens, text)
    if head.startswith("btrfs-"):
        return _parse_btrfs(tokens, text)
    if head == "zpool-on":
        if len(tokens) < 2 or not tokens[1].lower().startswith("md-"):
            raise LayoutError(
                f"'zpool-on' needs a RAID block device after it, like 'zpool-on md-raid6 16 "
                f"chunk=64K'; got {text!r}"
            )
        return ZpoolOnBlock(block=_parse_md(tokens[1:], text))
    if head == "raw":
        if len(tokens) != 2 or not _INTEGER.match(tokens[1]):
            names = tuple(tokens[1:])
            if names and not any(_is_keyword(t) or _INTEGER.match(t) for t in names):
                _check_names(names, text)
                return RawDevices(devices=names)
            raise LayoutError(f"write 'raw N' with N devices (e.g. 'raw 4'); got {text!r}")
        count = _count(tokens[1], "raw devices", text)
        return RawDevices(devices=tuple(linux_disk_name(i) for i in range(count)))
    return _parse_zfs(tokens, text)


# ---------------------------------------------------------------- ZFS


def _parse_zfs(tokens: list[str], text: str) -> ZfsLayout:
    specs = list(_zfs_specs(tokens, text))
    compact = [s for s in specs if s.count is not None]
    named = [s for s in specs if s.count is None]
    if compact and named:
        raise LayoutError(
            f"{text!r} mixes counts and device names; use one spelling, e.g. "
            f"'raidz2 4 log 1' or 'raidz2 sda sdb sdc sdd log nvme0n1'"
        )
    if not any(s.vclass == "normal" for s in specs):
        raise LayoutError(
            f"{text!r} has no data vdev; a pool needs at least one, e.g. 'mirror 2 log 1'"
        )
    if compact:
        total = sum(s.repeat * ((s.count or 0) + s.attached) for s in specs)
        if total > MAX_DEVICES:
            raise LayoutError(
                f"{text!r} needs {total} devices; zsim models at most {MAX_DEVICES} per pool"
            )
    # Canonical order: data vdevs, then the support classes as zpool status lists them; within
    # a class plain disks first, because in the zpool create spelling a device after a
    # mirror/raidz/draid joins that group ("raidz1 a b c d" + "e" cannot be written otherwise).
    class_rank = {c: i for i, c in enumerate(("normal", *SUPPORT_CLASSES))}
    specs.sort(key=lambda s: (class_rank[s.vclass], s.type_word not in ("disk", "stripe")))
    names = (linux_disk_name(i) for i in range(MAX_DEVICES + 1))
    vdevs: list[Vdev] = []
    for spec in specs:
        vdevs.extend(_build(spec, names, text))
    layout = ZfsLayout(vdevs=tuple(vdevs))
    _check_names(layout.devices, text)
    return layout


def _zfs_specs(tokens: list[str], text: str) -> Iterator[_Spec]:
    vclass: VdevClass = "normal"
    seen_classes: set[VdevClass] = set()
    repeat: int | None = None
    i = 0
    while i < len(tokens):
        token = tokens[i]
        word = token.lower()
        if word == "+":
            if repeat is not None:
                raise LayoutError(f"'{repeat}x' in {text!r} is not followed by a vdev type")
            if i == 0 or i == len(tokens) - 1 or tokens[i + 1] == "+":
                raise LayoutError(
                    f"'+' in {text!r} must join two groups of vdevs; remove the stray '+' "
                    "(e.g. 'raidz2 8 + raidz2 8')"
                )
            i += 1
            continue
        if word in _CLASS_WORDS:
            if repeat is not None:
                raise LayoutError(f"'{repeat}x {token}' in {text!r}: put the count after '{token}'")
            vclass = _CLASS_WORDS[word]
            if vclass in seen_classes and vclass in ("log", "cache", "spare"):
                raise LayoutError(
                    f"'{token}' appears twice in {text!r}; list all {vclass} devices after one "
                    f"'{token}', e.g. '{token} 2x mirror 2'"
                )
            seen_classes.add(vclass)
            i += 1
            if i == len(tokens) or tokens[i] == "+":
                raise LayoutError(
                    f"'{token}' in {text!r} has no devices after it; write e.g. '{token} 1'"
                )
            continue
        multiplier = _MULTIPLIER.match(word)
        if multiplier:
            if repeat is not None:
                raise LayoutError(f"two counts in a row ('{repeat}x {token}') in {text!r}")
            repeat = int(multiplier.group(1))
            if repeat < 1:
                raise LayoutError(f"'{token}' in {text!r}: the vdev count must be at least 1")
            i += 1
            if i == len(tokens) or not _is_type_word(tokens[i].lower()):
                raise LayoutError(
                    f"'{token}' in {text!r} must be followed by a vdev type, e.g. "
                    f"'{repeat}x mirror 2' or '{repeat}x raidz2 6'"
                )
            continue
        if word == _ATTACH:
            raise LayoutError(
                f"'attach' in {text!r} must follow the devices of a raidz vdev, e.g. "
                f"'raidz1 sda sdb sdc attach sdd' (compact: 'raidz1 3+1')"
            )
        if _is_type_word(word):
            i += 1
            args: list[str] = []
            while i < len(tokens) and not _is_keyword(tokens[i].lower()):
                args.append(tokens[i])
                i += 1
            spec = _spec_from_args(word, args, repeat or 1, vclass, text)
            if i < len(tokens) and tokens[i].lower() == _ATTACH:
                i += 1
                names: list[str] = []
                while i < len(tokens) and not _is_keyword(tokens[i].lower()):
                    names.append(tokens[i])
                    i += 1
                spec = _with_attached_names(spec, names, text)
            yield spec
            repeat = None
            continue
        # Bare device names or a bare count: plain disks (a stripe, or plain support devices).
        args = []
        while i < len(tokens) and not _is_keyword(tokens[i].lower()):
            args.append(tokens[i])
            i += 1
        if repeat is not None:
            raise LayoutError(f"'{repeat}x' in {text!r} must be followed by a vdev type")
        if len(args) == 1 and _EXPANDED.match(args[0]):
            _check_attach_target("disk", 1, text)
        if len(args) == 1 and _INTEGER.match(args[0]):
            if vclass == "normal":
                raise LayoutError(
                    f"a bare count {args[0]!r} in {text!r} is ambiguous; write 'stripe {args[0]}' "
                    f"for {args[0]} single-disk vdevs"
                )
            yield _Spec("disk", _count(args[0], f"{vclass} devices", text), (), 1, vclass)
        else:
            _reject_integers(args, "disk", text)
            for name in args:
                yield _Spec("disk", None, (name,), 1, vclass)


def _with_attached_names(spec: _Spec, names: list[str], text: str) -> _Spec:
    """The spec with the devices named after ``attach`` (zpool spelling only)."""
    _check_attach_target(spec.type_word, max(len(names), 1), text)
    if spec.count is not None:
        raise LayoutError(
            f"'attach' in {text!r} takes device names after a raidz given by names; with a "
            f"count write e.g. '{spec.type_word} {spec.count}+1'"
        )
    if not names:
        raise LayoutError(
            f"'attach' in {text!r} names no device; write e.g. "
            f"'{spec.type_word} {' '.join(spec.names)} attach sdz'"
        )
    _reject_integers(names, _ATTACH, text)
    return _Spec(spec.type_word, None, spec.names, spec.repeat, spec.vclass, 0, tuple(names))


def _check_attach_target(word: str, attached: int, text: str) -> None:
    """Only raidz vdevs grow by attaching a disk (RAIDZ expansion, ``spa_vdev_attach()``)."""
    if _RAIDZ.match(word):
        return
    if word == "mirror":
        fix = (
            "attaching to a mirror adds a copy, not space; write the wider mirror, e.g. 'mirror 3'"
        )
    elif word.startswith("draid"):
        fix = "OpenZFS cannot expand a dRAID vdev (zpool attach refuses it); add a vdev instead"
    else:
        fix = "a single-disk vdev becomes a mirror when a disk is attached; write 'mirror 2'"
    raise LayoutError(f"{text!r} attaches {attached} disk(s) to '{word}': {fix}")


def _spec_from_args(word: str, args: list[str], repeat: int, vclass: VdevClass, text: str) -> _Spec:
    if len(args) == 1 and _EXPANDED.match(args[0]):
        expanded = _EXPANDED.match(args[0])
        assert expanded is not None
        _check_attach_target(word, int(expanded.group(2)), text)
        created = _count(expanded.group(1), f"disks in '{word}'", text)
        attached = int(expanded.group(2))
        if attached < 1:
            raise LayoutError(
                f"'{word} {args[0]}' in {text!r} attaches no disk; write '{word} {created}' for "
                f"a vdev never expanded, or '{word} {created}+1' for one disk attached"
            )
        _count(expanded.group(2), f"disks attached to '{word}'", text)
        return _Spec(word, created, (), repeat, vclass, attached)
    if not args:
        if word.startswith("draid") and re.search(r":[0-9]+c", word):
            return _Spec(word, _draid_children_from_word(word, text), (), repeat, vclass)
        example = "stripe 4" if word == "stripe" else f"{word} 4"
        raise LayoutError(
            f"'{word}' in {text!r} needs a disk count or device names, e.g. '{example}'"
        )
    if len(args) == 1 and _INTEGER.match(args[0]):
        return _Spec(word, _count(args[0], f"disks in '{word}'", text), (), repeat, vclass)
    _reject_integers(args, word, text)
    if repeat != 1:
        raise LayoutError(
            f"'{repeat}x {word}' in {text!r} takes a count ('{repeat}x {word} 4'), not device names"
        )
    if word == "stripe":
        raise LayoutError(
            f"'stripe' takes a count ('stripe {len(args)}'); with names list them bare: "
            f"{' '.join(args)!r}"
        )
    return _Spec(word, None, tuple(args), 1, vclass)


def _reject_integers(args: list[str], word: str, text: str) -> None:
    numbers = [a for a in args if _INTEGER.match(a)]
    if numbers:
        raise LayoutError(
            f"'{word} {' '.join(args)}' in {text!r} mixes a count with device names; give either "
            f"a count ('{word} 4') or names ('{word} sda sdb sdc sdd')"
        )


def _count(token: str, what: str, text: str) -> int:
    if len(token) > 9:
        raise LayoutError(
            f"{token[:12]}… {what} in {text[:60]!r} is more than zsim models ({MAX_DEVICES})"
        )
    value = int(token)
    if value < 1:
        raise LayoutError(f"the number of {what} in {text!r} must be at least 1, not {value}")
    if value > MAX_DEVICES:
        raise LayoutError(f"{value} {what} in {text!r} is more than zsim models ({MAX_DEVICES})")
    return value


def _draid_children_from_word(word: str, text: str) -> int:
    children = re.search(r":([0-9]+)c", word)
    assert children is not None
    return _count(children.group(1), "dRAID children", text)


def _build(spec: _Spec, names: Iterator[str], text: str) -> list[Vdev]:
    word = spec.type_word
    out: list[Vdev] = []
    for _ in range(spec.repeat):
        devices = spec.names or tuple(next(names) for _ in range(spec.count or 0))
        attached = spec.attached_names or tuple(next(names) for _ in range(spec.attached))
        if word == "stripe":
            out.extend(Vdev("disk", (d,), vclass=spec.vclass) for d in devices)
            continue
        vdev = _make_vdev(word, devices, spec.vclass, text, attached)
        if vdev.kind == "disk":
            out.extend(Vdev("disk", (d,), vclass=spec.vclass) for d in devices)
        else:
            out.append(vdev)
    return out


def _make_vdev(
    word: str,
    devices: tuple[str, ...],
    vclass: VdevClass,
    text: str,
    attached: tuple[str, ...] = (),
) -> Vdev:
    n = len(devices)
    if vclass in ("cache", "spare") and word != "disk":
        raise LayoutError(
            f"{vclass} devices are plain devices, not '{word}'; write e.g. '{vclass} {max(n, 1)}'"
        )
    if word == "disk":
        return Vdev("disk", devices, vclass=vclass)
    if vclass in ("log", "special", "dedup") and word != "mirror":
        raise LayoutError(
            f"a {vclass} vdev must be a plain device or a mirror, not '{word}' (as zpool create "
            f"requires); write e.g. '{vclass} mirror 2'"
        )
    if word == "mirror":
        if n < 2:
            raise LayoutError(
                f"a mirror needs at least 2 disks, {text!r} gives it {n}; for one disk write "
                f"'stripe 1' (or '{vclass} 1' for a support device)"
            )
        return Vdev("mirror", devices, vclass=vclass)
    raidz = _RAIDZ.match(word)
    if raidz:
        parity = int(raidz.group(1) or "1")
        if not 1 <= parity <= MAX_PARITY:
            raise LayoutError(f"'{word}' in {text!r}: raidz parity must be 1, 2 or 3")
        if n < parity + 1:
            fits = f"'raidz{n - 1} {n}' or 'mirror {n}'" if n >= 2 else "'stripe 1'"
            raise LayoutError(
                f"raidz{parity} needs at least {parity + 1} disks (parity + 1) but {text!r} gives "
                f"it {n}; use {parity + 1} or more disks, or {fits}"
            )
        if n > MAX_RAIDZ_CHILDREN:
            raise LayoutError(
                f"raidz{parity} with {n} disks is wider than OpenZFS allows "
                f"({MAX_RAIDZ_CHILDREN}); split it, e.g. '{-(-n // 12)}x raidz{parity} 12'"
            )
        if n + len(attached) > MAX_RAIDZ_CHILDREN:
            raise LayoutError(
                f"raidz{parity} created {n} wide with {len(attached)} disks attached has "
                f"{n + len(attached)} columns, more than the {MAX_RAIDZ_CHILDREN} OpenZFS allows a "
                f"raidz; attach at most {MAX_RAIDZ_CHILDREN - n}, or add a vdev"
            )
        return Vdev(
            "raidz", devices + attached, parity=parity, vclass=vclass, attached=len(attached)
        )
    return _make_draid(word, devices, vclass, text)


def _make_draid(word: str, devices: tuple[str, ...], vclass: VdevClass, text: str) -> Vdev:
    """dRAID spelling and defaults as ``draid_config_by_type()``: parity 1, spares 0,
    data = min(children − spares − parity, 8), ``c`` must equal the number of children."""
    match = _DRAID.match(word)
    assert match is not None
    children = len(devices)
    parity = int(match.group(1) or "1")
    if not 1 <= parity <= MAX_PARITY:
        raise LayoutError(f"'{word}' in {text!r}: dRAID parity must be 1, 2 or 3")
    ndata: int | None = None
    nspares = 0
    for part in match.group(2).split(":")[1:]:
        m = re.fullmatch(r"([0-9]{1,9})([cdsCDS])", part)
        if m is None:
            raise LayoutError(
                f"'{word}' in {text!r}: each ':' part is a number with d, s or c, like "
                f"'draid2:8d:2s:24c', not ':{part}'"
            )
        value, suffix = int(m.group(1)), m.group(2).lower()
        if suffix == "c" and value != children:
            raise LayoutError(
                f"'{word}' in {text!r} says {value} children but {children} devices are given"
            )
        if suffix == "d":
            ndata = value
        elif suffix == "s":
            nspares = value
    if children > MAX_DRAID_CHILDREN:
        raise LayoutError(
            f"dRAID supports at most {MAX_DRAID_CHILDREN} children; {text!r} has {children}"
        )
    if ndata is None:
        if children <= nspares + parity:
            raise LayoutError(
                f"'{word}' in {text!r}: {nspares} spares and parity {parity} leave no disk for "
                f"data among {children} children"
            )
        ndata = min(children - nspares - parity, 8)
    if nspares > MAX_DRAID_SPARES:
        raise LayoutError(
            f"'{word}' in {text!r}: at most {MAX_DRAID_SPARES} distributed spares are allowed"
        )
    if ndata < 1 or ndata + parity + nspares > children:
        most = children - nspares - parity
        fix = f"at most {most}d" if most >= 1 else f"more than {nspares + parity} children"
        raise LayoutError(
            f"'{word}' in {text!r}: {ndata} data + {parity} parity + {nspares} spares need "
            f"{ndata + parity + nspares} children but there are {children}; use {fix}"
        )
    return Vdev("draid", devices, parity=parity, ndata=ndata, nspares=nspares, vclass=vclass)


def _check_names(names: tuple[str, ...], text: str) -> None:
    seen: set[str] = set()
    for name in names:
        if name in seen:
            raise LayoutError(f"device {name!r} appears twice in {text!r}; each disk is used once")
        seen.add(name)


# ---------------------------------------------------------------- md, btrfs


_MD_LEVELS = {"md-raid0": 0, "md-raid1": 1, "md-raid10": 10, "md-raid5": 5, "md-raid6": 6}
_MD_MIN = {0: 2, 1: 2, 10: 2, 5: 3, 6: 4}  # mdadm: RAID5 needs 3 (2 is allowed but degenerate)


def _parse_md(tokens: list[str], text: str) -> MdArray:
    word = tokens[0].lower()
    if word not in _MD_LEVELS:
        raise LayoutError(
            f"unknown md level {tokens[0]!r} in {text!r}; use md-raid0, md-raid1, md-raid10, "
            f"md-raid5 or md-raid6"
        )
    level = _MD_LEVELS[word]
    chunk = MD_DEFAULT_CHUNK
    args: list[str] = []
    for token in tokens[1:]:
        if token.lower().startswith("chunk="):
            try:
                chunk = parse_size(token.split("=", 1)[1])
            except UnitError as err:
                raise LayoutError(f"bad chunk in {text!r}: {err}") from None
        elif token == "+":
            raise LayoutError(f"an md array cannot be combined with ' + ' ({text!r})")
        else:
            args.append(token)
    if chunk < 4096 or chunk & (chunk - 1):
        raise LayoutError(
            f"md chunk {chunk} B in {text!r} must be a power of two of at least 4K, e.g. chunk=512K"
        )
    if len(args) == 1 and _INTEGER.match(args[0]):
        count = _count(args[0], "md member disks", text)
        devices = tuple(linux_disk_name(i) for i in range(count))
    elif args and not any(_INTEGER.match(a) or _is_keyword(a.lower()) for a in args):
        devices = tuple(args)
        _check_names(devices, text)
    else:
        raise LayoutError(
            f"write {word} with a disk count or device names, e.g. '{word} 8 chunk=512K'; "
            f"got {text!r}"
        )
    if len(devices) < _MD_MIN[level]:
        raise LayoutError(
            f"md RAID{level} needs at least {_MD_MIN[level]} disks; {text!r} gives {len(devices)}"
        )
    return MdArray(level=level, devices=devices, chunk=chunk)  # type: ignore[arg-type]


def _parse_btrfs(tokens: list[str], text: str) -> BtrfsArray:
    profile = tokens[0].lower().removeprefix("btrfs-")
    if profile not in ("raid1", "raid10"):
        raise LayoutError(f"unknown btrfs profile in {text!r}; use btrfs-raid1 N or btrfs-raid10 N")
    if len(tokens) != 2 or not _INTEGER.match(tokens[1]):
        raise LayoutError(f"write 'btrfs-{profile} N' with a disk count; got {text!r}")
    count = _count(tokens[1], "btrfs disks", text)
    minimum = 2 if profile == "raid1" else 4
    if count < minimum:
        raise LayoutError(f"btrfs {profile} needs at least {minimum} disks; {text!r} gives {count}")
    return BtrfsArray(profile=profile, devices=tuple(linux_disk_name(i) for i in range(count)))  # type: ignore[arg-type]


# ---------------------------------------------------------------- printing


def to_compact(layout: Layout) -> str:
    """Print a layout in the compact spelling, grouping equal neighbours (``4x mirror 2``)."""
    if not isinstance(layout, ZfsLayout):
        return layout.compact()
    parts: list[str] = []
    normal = _grouped(layout.of_class("normal"))
    parts.append(" + ".join(normal))
    for vclass in SUPPORT_CLASSES:
        vdevs = layout.of_class(vclass)
        if vdevs:
            parts.append(f"{vclass} " + " + ".join(_grouped(vdevs)))
    return " ".join(parts)


def vdev_group_text(count: int, vdev: str, spares: int = 0) -> str:
    """``count`` vdevs spelled ``vdev`` and ``spares`` hot spares in the compact spelling:
    ``3x raidz2 7 spare 3``, ``mirror 2`` (no ``1x``, no ``spare 0``)."""
    text = vdev if count == 1 else f"{count}x {vdev}"
    return f"{text} spare {spares}" if spares else text


def _grouped(vdevs: tuple[Vdev, ...]) -> list[str]:
    groups: list[tuple[Vdev, int]] = []
    for vdev in vdevs:
        if groups and groups[-1][0].shape() == vdev.shape():
            groups[-1] = (groups[-1][0], groups[-1][1] + 1)
        else:
            groups.append((vdev, 1))
    out = []
    for vdev, count in groups:
        if vdev.kind == "disk":
            out.append(f"{count}" if vdev.vclass != "normal" else f"stripe {count}")
        else:
            out.append(vdev_group_text(count, vdev.compact()))
    return out


def to_zpool(layout: Layout) -> str:
    """Print the vdev arguments of ``zpool create`` (or of ``mdadm``/``mkfs.btrfs``)."""
    if isinstance(layout, ZfsLayout):
        words: list[str] = []
        current: str = "normal"
        for vdev in layout.vdevs:
            if vdev.vclass != current:
                words.append(vdev.vclass)
                current = vdev.vclass
            if vdev.kind != "disk":
                words.append(vdev.type_word())
            words.extend(vdev.as_created().devices)
            if vdev.attached:
                words.extend((_ATTACH, *vdev.attached_devices))
        return " ".join(words)
    if isinstance(layout, MdArray):
        return _mdadm_args(layout)
    if isinstance(layout, ZpoolOnBlock):
        return f"md0   # on: {_mdadm_args(layout.block)}"
    if isinstance(layout, BtrfsArray):
        return f"-d {layout.profile} -m {layout.profile} " + " ".join(layout.devices)
    return " ".join(layout.devices)


def _mdadm_args(md: MdArray) -> str:
    chunk = "" if md.level == 1 else f" --chunk={md.chunk // KiB}K"
    layout = " --layout=n2" if md.level == 10 else ""
    return f"--level={md.level} --raid-devices={md.width}{chunk}{layout} " + " ".join(md.devices)
