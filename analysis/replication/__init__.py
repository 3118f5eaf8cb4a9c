"""Replication packages (issue 21, points 4 and 5): a study's definition, data, report and environment in one zip
with a MANIFEST of SHA-256 hashes (``manage.py package``), and its check and recomputation in a scratch database
(``manage.py reproduce``).

Modules: ``manifest`` (hashes, the deterministic zip, the check), ``figure_numbers`` (the numbers a matplotlib
figure draws), ``package`` (what goes in), ``loading`` (the package into an empty database), ``compare`` (two
reports side by side, with a tolerance), ``scratch`` (the child process that migrates, loads and recomputes),
``rerun`` (the stored prompts asked again), ``reproduce`` (the whole check, run by the command)."""
