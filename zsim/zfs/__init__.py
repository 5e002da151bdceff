"""ZFS sub-models shared by the engines, as pure functions and tables by OpenZFS release.

Modules: :mod:`~zsim.zfs.version` (releases and the features each has),
:mod:`~zsim.zfs.arc` (ARC sizing and the record cache), :mod:`~zsim.zfs.txg` (transaction
groups and the write throttle), :mod:`~zsim.zfs.compression` (a compressed record's size),
:mod:`~zsim.zfs.indirect` (indirect blocks rewritten per txg), :mod:`~zsim.zfs.scan`
(scrub, resilver and rebuild tunables), :mod:`~zsim.zfs.space` and
:mod:`~zsim.zfs.vdev_space` (space rules, one vdev's space) and :mod:`~zsim.zfs.expansion`
(RAIDZ expansion). The ZIL is modelled in the discrete-event engine,
:mod:`zsim.des.zil`.
"""
