"""The discrete-event engine (SimPy): clients → ZPL/ARC → DMU/txg → vdev queues → bus → devices.

Modules: :mod:`~zsim.des.run` (:func:`simulate_des`, which picks the engine for a layout),
:mod:`~zsim.des.engine` (the ZFS engine: build, run, measure), :mod:`~zsim.des.zfs_model`
(records, ARC, txg sync), :mod:`~zsim.des.clients` (fio jobs, dd streams),
:mod:`~zsim.des.vdev` (vdev queues and block maps), :mod:`~zsim.des.zil` (the intent log),
:mod:`~zsim.des.trace` (trace replay) and :mod:`zsim.des.linux` (md, btrfs, raw devices and
ZFS on md). The machine they run on (devices, links, CPU, memory, statistics) is
:mod:`zsim.machine`.
"""
