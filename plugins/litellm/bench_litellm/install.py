"""How to get litellm: a leaf module, so the package and its client both read it without importing each other."""

INSTALL = "pip install 'bench-litellm[litellm]'"
"""How to get litellm, an optional extra: the error that refuses a run without it names this command."""
