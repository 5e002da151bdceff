"""The analytic engine: the discrete-event engine's scenario, maps and device models solved
with closed queueing networks (:mod:`~zsim.analytic.engine` the entry point,
:mod:`~zsim.analytic.validity`, :mod:`~zsim.analytic.demands`, :mod:`~zsim.analytic.reads`,
:mod:`~zsim.analytic.writes`, :mod:`~zsim.analytic.queueing`, :mod:`~zsim.analytic.devices`);
``zsim.simulate(sc, engine="analytic")`` runs it."""
