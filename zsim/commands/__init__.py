"""The ``zsim`` commands: each takes the parsed options of :mod:`zsim.cli`, calls the API and
returns ``(JSON-able data, text)``, which :func:`zsim.cli.main` prints.

They are the command line's layer: the API functions they call take plain values, never an
``argparse.Namespace``. Modules: :mod:`~zsim.commands.capacity`, :mod:`~zsim.commands.catalog`
(``layout``, ``models``), :mod:`~zsim.commands.simulate` (``simulate``, ``resilver``),
:mod:`~zsim.commands.sweep` (``sweep``, ``recommend``) and :mod:`~zsim.commands.calibrate`
(``calibrate``, ``validate``).
"""
