"""errata in IPython and Jupyter: ``%load_ext errata`` and ``errata.install()``."""
