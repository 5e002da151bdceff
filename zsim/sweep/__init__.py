"""Sweeps: many scenarios (layouts × disks × workloads) evaluated by one engine, locally or on
a Dask cluster, into one tidy table; and the recommender that picks from it.

``zsim.sweep(24, "seagate-ironwolf-12tb")`` is :func:`zsim.sweep.table.sweep`, a plain
function (``zsim`` binds the name to it, DESIGN.md §5). The modules are imported by name
(``from zsim.sweep.table import SweepTable``, ``from zsim.sweep import table``);
``zsim.sweep`` itself is the function, so they are not reached as its attributes.

Modules: :mod:`~zsim.sweep.layouts` (which layouts), :mod:`~zsim.sweep.workloads` (named
workloads), :mod:`~zsim.sweep.plan` (inputs, capacity rows, columns), :mod:`~zsim.sweep.point`
(one scenario to run), :mod:`~zsim.sweep.execute` (run them, locally or on Dask),
:mod:`~zsim.sweep.table` (run a plan into the table; :func:`~zsim.sweep.table.sweep`),
:mod:`~zsim.sweep.resilver` (resilver columns), :mod:`~zsim.sweep.recommend` (the Pareto front).
"""
