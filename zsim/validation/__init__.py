"""zsim against measurements: the bundled published sets and a user's own fitted profile.

* :mod:`~zsim.validation.registry` — the data sets ``zsim validate`` runs (name, data files,
  scenario and rows functions, table, tolerance, default or not);
* one module per published set: :mod:`~zsim.validation.ars` (Ars Technica, 8 × IronWolf),
  :mod:`~zsim.validation.disksim` (DiskSim 4.0 traces), :mod:`~zsim.validation.tnbench`
  (tn-bench on a TrueNAS M50), :mod:`~zsim.validation.clemtibs` (fio on a 5 × 12 TB raidz2),
  :mod:`~zsim.validation.draid` (OpenZFS's dRAID rebuild chart);
* :mod:`~zsim.validation.raw_sets` — the shipped derived figures, derived again from the
  published raw files with zsim's own parsers (``calibration/derive_*.py``);
* :mod:`~zsim.validation.profile` — ``zsim validate --profile``: a (fitted) profile's
  predictions against the fio/dd results it came from, with leave-one-out refits;
* :mod:`~zsim.validation.report` — every set's points in one form, their per-class and per-set
  summaries, and the files ``zsim validate --all`` writes (``docs/validation.md``, the
  residuals ``accuracy.toml``); :mod:`~zsim.validation.accuracy` — the class of a prediction
  and the band of its class (defined in :mod:`zsim.scenario.accuracy`, re-exported);
* :mod:`~zsim.validation.common` — :func:`~zsim.validation.common.reference_root` (where the
  bundled data is) and the error helpers every table uses.
"""
