"""The package version, in a module of its own so that anything may read it (the run identity,
the CLI's ``--version``) without importing the package root and its lazy API."""

__version__ = "0.1.0"
