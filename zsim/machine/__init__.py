"""The machine every engine runs on: devices, links, CPU and memory costs, run control, statistics.

Public modules, shared by the discrete-event engines (:mod:`zsim.des`), the analytic engine
(:mod:`zsim.analytic`), resilver (:mod:`zsim.resilver`) and calibration (:mod:`zsim.calibrate`):

* :mod:`~zsim.machine.resources` — the SimPy resources: :class:`Device` (a disk or SSD serving
  :class:`DevIO` requests with the :mod:`zsim.hardware` service models), :class:`BandwidthStage`
  and :class:`Path` (the bus stages between memory and a device), :class:`MemoryBus`,
  :class:`CpuPool`, :class:`Busy` bookkeeping and :func:`after` (a timeout with a callback);
* :mod:`~zsim.machine.links` — line encodings, PCIe rates, the HBA's default command ceiling,
  :func:`bus_stages` (each device's chain of stages) and :func:`device_peak_rates`;
* :mod:`~zsim.machine.costs` — CPU seconds per call, I/O and byte (:func:`cpu_costs`), and the
  zio taskq threads (:func:`zio_taskq_threads`);
* :mod:`~zsim.machine.memory` — DRAM traffic per data pass;
* :mod:`~zsim.machine.run_control` — :class:`RunControl`, when a run stops;
* :mod:`~zsim.machine.budget` — :func:`check_budget`, the limits a scenario must fit before
  a run is built (``ZSIM_MAX_*``);
* :mod:`~zsim.machine.run_guard` — :class:`RunGuard` and :func:`run_until`, the wall-time,
  memory and completion-log caps checked inside the event loop;
* :mod:`~zsim.machine.collector` — :func:`collector_paused`, Python's cyclic garbage
  collector off while an event loop runs (it cost up to half a run's wall time);
* :mod:`~zsim.machine.stats` — :class:`CompletionLog`, MSER-5 warm-up removal and batch means.

Nothing here imports an engine.
"""
